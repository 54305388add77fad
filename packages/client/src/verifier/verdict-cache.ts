import { LRUCache } from 'lru-cache';
import type { KeyVerification } from '../types.js';

/** The bounds of a verdict cache. */
export interface VerdictCacheLimits {
  /** The most verdicts held; the least recently used goes first. */
  maxEntries: number;
  /** No verdict is answered from memory once it is this old. */
  maxAgeMs: number;
  /** A `NOT_FOUND` is answered from memory for this long only. */
  negativeTtlMs: number;
}

/** Freezes `value` and everything it holds: a verdict answered from memory is one object shared by every caller. */
function deepFreeze(value: unknown): void {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) {
      deepFreeze(inner);
    }
  }
}

/** A remembered verdict, with what its trust depends on. */
interface Entry {
  verdict: KeyVerification;
  /** The key the verdict names (none for `NOT_FOUND`), so that a change to the key forgets it. */
  keyId: string | null;
  /** `performance.now()` when the question was sent: the verdict is at least this old. */
  askedAt: number;
  /** When a `VALID` verdict stops being true by the clock (`expires_at`), in ms since the epoch; else Infinity. */
  validUntil: number;
}

/**
 * The verdicts a caching verifier remembers, keyed by the hash of the secret: a bounded LRU, with an index from key
 * ID to hashes so that a change to one key forgets every verdict that names it. Whether a verdict is trusted is
 * decided at each `get`, by the age of the verdict and the clock; whether the feed is live is the caller's business.
 */
export class VerdictCache {
  readonly #limits: VerdictCacheLimits;
  readonly #entries: LRUCache<string, Entry>;
  /** Key ID → the hash remembered for it; a set of hashes only when several secrets named it (a Set per key costs). */
  readonly #hashesByKey = new Map<string, string | Set<string>>();

  constructor(limits: VerdictCacheLimits) {
    this.#limits = limits;
    this.#entries = new LRUCache<string, Entry>({
      max: limits.maxEntries,
      // Called for every entry that leaves, however it leaves (evicted, replaced, deleted, cleared).
      dispose: (entry, hash) => this.#unindex(entry.keyId, hash),
    });
  }

  /** How many verdicts are held (some may no longer be trusted: they go at their next `get`). */
  get size(): number {
    return this.#entries.size;
  }

  /** The verdict for `hash` if one is held and still trusted; an untrusted one is dropped. */
  get(hash: string, now: number = performance.now(), wallClock: number = Date.now()): KeyVerification | undefined {
    const entry = this.#entries.get(hash);
    if (entry === undefined) {
      return undefined;
    }
    if (!this.#trusted(entry, now, wallClock)) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry.verdict;
  }

  /** Remembers the verdict for `hash`, asked at `askedAt` (`performance.now()` when the question was sent). */
  set(hash: string, verdict: KeyVerification, askedAt: number): void {
    deepFreeze(verdict);
    const keyId = verdict.key?.id ?? null;
    const expiresAt = verdict.code === 'VALID' ? verdict.key?.expires_at : null;
    const validUntil = expiresAt === null || expiresAt === undefined ? Infinity : Date.parse(expiresAt);
    this.#entries.set(hash, { verdict, keyId, askedAt, validUntil: Number.isNaN(validUntil) ? -Infinity : validUntil });
    if (keyId !== null) {
      const hashes = this.#hashesByKey.get(keyId);
      if (hashes === undefined || hashes === hash) {
        this.#hashesByKey.set(keyId, hash);
      } else if (typeof hashes === 'string') {
        this.#hashesByKey.set(keyId, new Set([hashes, hash]));
      } else {
        hashes.add(hash);
      }
    }
  }

  /** Forgets every verdict that names the key `keyId`. */
  forgetKey(keyId: string): void {
    const hashes = this.#hashesByKey.get(keyId);
    if (hashes === undefined) {
      return;
    }
    for (const hash of typeof hashes === 'string' ? [hashes] : [...hashes]) {
      this.#entries.delete(hash);
    }
    this.#hashesByKey.delete(keyId);
  }

  /** Forgets everything. */
  clear(): void {
    this.#entries.clear();
    this.#hashesByKey.clear();
  }

  #trusted(entry: Entry, now: number, wallClock: number): boolean {
    const age = now - entry.askedAt;
    if (age >= this.#limits.maxAgeMs) {
      return false;
    }
    if (entry.verdict.code === 'NOT_FOUND') {
      return age < this.#limits.negativeTtlMs;
    }
    return wallClock < entry.validUntil;
  }

  #unindex(keyId: string | null, hash: string): void {
    if (keyId === null) {
      return;
    }
    const hashes = this.#hashesByKey.get(keyId);
    if (hashes === hash) {
      this.#hashesByKey.delete(keyId);
    } else if (typeof hashes === 'object') {
      hashes.delete(hash);
      if (hashes.size === 0) {
        this.#hashesByKey.delete(keyId);
      }
    }
  }
}
