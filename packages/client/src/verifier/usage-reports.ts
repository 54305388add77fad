import { KEY_USAGE_REPORT } from '@apikeys/api-types';
import type { KeyUse } from '../types.js';
import { unrefTimer } from './feed-stream.js';

/** How the reports are sent and how often. */
export interface UsageReportsOptions {
  /** Sends one `POST /v1/keys/usage`; rejects if it was not received. */
  send(uses: KeyUse[]): Promise<unknown>;
  /** How often the noted uses are sent. */
  intervalMs: number;
}

/** A time as the spec's `Timestamp` has it: RFC 3339, UTC, exactly six fraction digits. */
export function toTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, -1)}000Z`;
}

/**
 * The uses of keys answered `VALID` from memory, which the server did not see: noted as key ID → latest use, and sent
 * once per interval with `reportKeyUsage`, at most one use per key, in requests of at most `KEY_USAGE_REPORT.maxUses`
 * uses. What a failed request held is merged back and sent at the next interval, so nothing is lost and the notes
 * never hold more than one entry per key.
 */
export class UsageReports {
  readonly #options: UsageReportsOptions;
  readonly #noted = new Map<string, number>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #sending: Promise<void> | undefined;

  constructor(options: UsageReportsOptions) {
    this.#options = options;
  }

  /** How many keys have a use waiting to be reported. */
  get pending(): number {
    return this.#noted.size;
  }

  /** Starts the interval timer (which does not keep a Node process alive). */
  start(): void {
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.flush(), this.#options.intervalMs);
      unrefTimer(this.#timer);
    }
  }

  /** Notes that the key `apiKeyId` was found valid at `at` (ms since the epoch). */
  note(apiKeyId: string, at: number = Date.now()): void {
    const previous = this.#noted.get(apiKeyId);
    if (previous === undefined || previous < at) {
      this.#noted.set(apiKeyId, at);
    }
  }

  /** Sends what is noted now; a report already being sent is waited for instead of sending twice at once. */
  flush(): Promise<void> {
    this.#sending ??= this.#send().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  /** Stops the timer and sends what is left (once more after a report that was in flight). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sending;
    await this.flush();
  }

  async #send(): Promise<void> {
    const uses = [...this.#noted].map(([api_key_id, at]) => ({ api_key_id, at }));
    this.#noted.clear();
    for (let start = 0; start < uses.length; start += KEY_USAGE_REPORT.maxUses) {
      const batch = uses.slice(start, start + KEY_USAGE_REPORT.maxUses);
      try {
        await this.#options.send(batch.map(({ api_key_id, at }) => ({ api_key_id, used_at: toTimestamp(at) })));
      } catch {
        // Kept for the next interval, merged with what was noted meanwhile: the latest use of each key wins.
        for (const { api_key_id, at } of uses.slice(start)) {
          this.note(api_key_id, at);
        }
        return;
      }
    }
  }
}
