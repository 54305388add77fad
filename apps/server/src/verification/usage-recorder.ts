import type { EpochMicros, KeyUse, Store } from '@apikeys/store';
import type { Logger } from 'pino';

/** How often the uses of keys are written: a crash loses at most this much of them. */
export const USAGE_FLUSH_INTERVAL_MS = 10_000;

const MINUTE_MICROS = 60_000_000;

/**
 * Records when keys were last verified as valid, to the minute, off the path of the answers: `record` only notes the
 * minute in memory, at most once per key per minute, and every interval one statement writes what was noted
 * (`recordKeyUsage`, which never moves a key's time back, whichever replica writes last). A write that fails is
 * tried again with the next one.
 */
export class UsageRecorder {
  /** The minute last noted for each key, so that a key is noted once a minute; only the current minute's are kept. */
  #noted = new Map<string, EpochMicros>();
  /** What the next write writes, by key ID. */
  #pending = new Map<string, KeyUse>();
  /** The latest minute noted (from the request's clock): each write forgets the keys noted in earlier minutes. */
  #currentMinute = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<Store, 'recordKeyUsage'>,
    private readonly logger: Logger,
    private readonly intervalMs = USAGE_FLUSH_INTERVAL_MS,
  ) {}

  /**
   * Notes that `keyId`, a key of `organizationId`, was found valid at `usedAt`: by this server, or by a gateway that
   * answered from its memory and reported it. A use earlier than one already noted changes nothing.
   */
  record(keyId: string, organizationId: string, usedAt: EpochMicros): void {
    const minute = Math.floor(usedAt / MINUTE_MICROS) * MINUTE_MICROS;
    this.#currentMinute = Math.max(this.#currentMinute, minute);
    if ((this.#noted.get(keyId) ?? Number.NEGATIVE_INFINITY) >= minute) {
      return;
    }
    this.#noted.set(keyId, minute);
    this.#pending.set(keyId, { id: keyId, organizationId, lastUsedAt: minute });
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.#timer.unref();
  }

  /** Writes what was noted since the last write, in one statement; resolves once written (or failed and kept). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  async #write(): Promise<void> {
    const uses = [...this.#pending.values()];
    this.#pending = new Map();
    this.#forgetPastMinutes();
    if (uses.length === 0) {
      return;
    }
    try {
      await this.store.recordKeyUsage(uses);
    } catch (error) {
      // Kept for the next write, unless a later minute was noted meanwhile.
      for (const use of uses) {
        if (!this.#pending.has(use.id)) {
          this.#pending.set(use.id, use);
        }
      }
      this.logger.warn({ err: error, keys: uses.length }, 'could not record when keys were last used; will retry');
    }
  }

  #forgetPastMinutes(): void {
    for (const [id, noted] of this.#noted) {
      if (noted < this.#currentMinute) {
        this.#noted.delete(id);
      }
    }
  }
}
