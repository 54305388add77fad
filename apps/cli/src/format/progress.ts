/** Where progress goes: stderr, or a stand-in in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Reports a running count of fetched keys. */
export interface Progress {
  update(count: number): void;
  /** Erases the progress line, if one was written. */
  done(): void;
}

const INTERVAL_MS = 100;

/** A progress that reports nothing. */
export const NO_PROGRESS: Progress = { update: () => {}, done: () => {} };

/**
 * A `fetched N keys…` line, rewritten in place at most every 100 ms. It writes only when `stream` is a terminal, so
 * redirected or piped stderr never receives it.
 */
export function keyProgress(stream: ProgressStream, now: () => number = Date.now): Progress {
  if (!stream.isTTY) {
    return NO_PROGRESS;
  }
  let shown = false;
  let last = Number.NEGATIVE_INFINITY;
  return {
    update(count) {
      const time = now();
      if (time - last >= INTERVAL_MS) {
        last = time;
        shown = true;
        stream.write(`\r\x1b[2Kfetched ${count} ${count === 1 ? 'key' : 'keys'}…`);
      }
    },
    done() {
      if (shown) {
        stream.write('\r\x1b[2K');
        shown = false;
      }
    },
  };
}
