import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EpochMicros, KeyUse, Store } from '@apikeys/store';
import type { Logger } from 'pino';

/** How often the uses of keys are written: a crash loses at most this much of them. */
export const USAGE_FLUSH_INTERVAL_MS = 10_000;

/**
 * The most keys with a use waiting to be written (and as many noted this minute): past it, a new key's use is
 * dropped and counted. About 150 bytes each: 15 MB at most, whatever gateways report or however long the database
 * is away.
 */
export const DEFAULT_MAX_PENDING_KEYS = 100_000;

/**
 * The most uses one statement writes. Each statement holds the event loop while SQLite runs it (about 2 ms for 500
 * keys on the bench machine); the next waits for a turn of the event loop, so requests are answered in between.
 */
export const USES_PER_STATEMENT = 500;

const MINUTE_MICROS = 60_000_000;
/** Each warning about dropped uses is logged at most once in this many milliseconds. */
const DROP_WARNING_INTERVAL_MS = 60_000;

/** Why uses were dropped: too many keys waiting, or a write that failed with its keys' places taken meanwhile. */
export type UsageDropReason = 'pending_full' | 'write_failed';

/** Where the recorder counts what it drops (the server's metrics). */
export interface UsageCounters {
  countKeyUsesDropped(reason: UsageDropReason, count: number): void;
}

/** A key of one organization: every note of a use is keyed by both, so no organization can stand in for another. */
const keyOf = (organizationId: string, keyId: string) => `${organizationId}\n${keyId}`;

/**
 * Records when keys were last verified as valid, to the minute, off the path of the answers: `record` only notes the
 * minute in memory, at most once per key per minute, and every interval the notes are written (`recordKeyUsage`,
 * which never moves a key's time back, whichever replica writes last), in statements of `USES_PER_STATEMENT`.
 * Bounded: at most `maxPendingKeys` keys wait to be written; past that, a new key's use is dropped, counted and
 * warned of (at most once a minute). A write that fails is tried again with the next one, within the same bound.
 */
export class UsageRecorder {
  /** The minute last noted for each key, so that a key is noted once a minute; only the current minute's are kept. */
  #noted = new Map<string, EpochMicros>();
  /** What the next write writes. */
  #pending = new Map<string, KeyUse>();
  /** The latest minute noted (from the request's clock): each write forgets the keys noted in earlier minutes. */
  #currentMinute = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #dropped: Record<UsageDropReason, number> = { pending_full: 0, write_failed: 0 };
  #lastWarnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Pick<Store, 'recordKeyUsage'>,
    private readonly logger: Logger,
    private readonly options: { intervalMs?: number; maxPendingKeys?: number; counters?: UsageCounters } = {},
  ) {}

  /** How many keys have a use waiting to be written. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Notes that `keyId`, a key of `organizationId`, was found valid at `usedAt`: by this server, or by a gateway that
   * answered from its memory and reported it. A use earlier than one already noted changes nothing.
   */
  record(keyId: string, organizationId: string, usedAt: EpochMicros): void {
    const minute = Math.floor(usedAt / MINUTE_MICROS) * MINUTE_MICROS;
    this.#currentMinute = Math.max(this.#currentMinute, minute);
    const key = keyOf(organizationId, keyId);
    if ((this.#noted.get(key) ?? Number.NEGATIVE_INFINITY) >= minute) {
      return;
    }
    if (!this.#pending.has(key) && this.#pending.size >= this.#maxPendingKeys) {
      this.#drop('pending_full', 1);
      return;
    }
    if (this.#noted.has(key) || this.#noted.size < this.#maxPendingKeys) {
      this.#noted.set(key, minute);
    }
    this.#pending.set(key, { id: keyId, organizationId, lastUsedAt: minute });
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.options.intervalMs ?? USAGE_FLUSH_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Writes what was noted since the last write; resolves once written (or failed and kept). */
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

  get #maxPendingKeys(): number {
    return this.options.maxPendingKeys ?? DEFAULT_MAX_PENDING_KEYS;
  }

  async #write(): Promise<void> {
    const uses = [...this.#pending];
    this.#pending = new Map();
    this.#forgetPastMinutes();
    for (let from = 0; from < uses.length; from += USES_PER_STATEMENT) {
      if (from > 0) {
        await nextTurn();
      }
      const statement = uses.slice(from, from + USES_PER_STATEMENT);
      try {
        await this.store.recordKeyUsage(statement.map(([, use]) => use));
      } catch (error) {
        this.#keepForNextWrite(uses.slice(from));
        this.logger.warn(
          { err: error, keys: uses.length - from, pending: this.#pending.size },
          'could not record when keys were last used; will retry',
        );
        return;
      }
    }
  }

  /** Puts back what a failed write held, unless a later use of the key was noted meanwhile, within the bound. */
  #keepForNextWrite(uses: readonly [string, KeyUse][]): void {
    let dropped = 0;
    for (const [key, use] of uses) {
      if (this.#pending.has(key)) {
        continue;
      }
      if (this.#pending.size >= this.#maxPendingKeys) {
        dropped += 1;
      } else {
        this.#pending.set(key, use);
      }
    }
    if (dropped > 0) {
      this.#drop('write_failed', dropped);
    }
  }

  #drop(reason: UsageDropReason, count: number): void {
    this.options.counters?.countKeyUsesDropped(reason, count);
    this.#dropped[reason] += count;
    const now = performance.now();
    if (now - this.#lastWarnedAt >= DROP_WARNING_INTERVAL_MS) {
      this.#lastWarnedAt = now;
      this.logger.warn(
        { dropped: this.#dropped, max_pending_keys: this.#maxPendingKeys },
        'uses of keys dropped: more keys are waiting to be recorded than the server keeps (counted since the last ' +
          'such line); their last_used_at may lag',
      );
      this.#dropped = { pending_full: 0, write_failed: 0 };
    }
  }

  #forgetPastMinutes(): void {
    for (const [key, noted] of this.#noted) {
      if (noted < this.#currentMinute) {
        this.#noted.delete(key);
      }
    }
  }
}
