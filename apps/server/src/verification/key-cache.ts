import type { KeyChangeEvent, KeyOfSecret, Store } from '@apikeys/store';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { KeysBySecret } from './verification-service.js';

/** How much verification remembers, and for how long. */
export interface KeyCacheSettings {
  /** Secrets remembered at most (the least recently used are forgotten first); 0 turns the cache off. */
  maxEntries: number;
  /** How long a found key is trusted without hearing of a change to it: the net under lost notifications. */
  ttlMs: number;
  /** How long a secret that is no key's is remembered: a flood of one unknown secret reaches the store this often. */
  negativeTtlMs: number;
}

export const DEFAULT_KEY_CACHE: KeyCacheSettings = { maxEntries: 50_000, ttlMs: 60_000, negativeTtlMs: 5_000 };

/** A secret's hash as remembered: its key, or null for a secret that is no key's. */
interface Entry {
  found: KeyOfSecret | null;
}

/**
 * The keys of secrets, by hash, in front of the store: bounded (LRU), each entry trusted for a time to live, and
 * forgotten as soon as a change to its key is heard (`invalidate`: this process's changes at once, the others'
 * through the store's notifications). Concurrent lookups of one hash share one read. A read that was in flight when
 * any change was heard answers its caller but is not remembered, since it may predate the change.
 */
export class KeyCache implements KeysBySecret {
  readonly #entries: LRUCache<string, Entry>;
  /** The hash each remembered key was found by, to forget it when the key changes. */
  readonly #hashOfKey = new Map<string, string>();
  readonly #inFlight = new Map<string, Promise<KeyOfSecret | undefined>>();
  /** Counts the changes heard: a read remembers its result only if none was heard while it ran. */
  #changesHeard = 0;

  constructor(
    private readonly store: KeysBySecret,
    private readonly settings: KeyCacheSettings,
  ) {
    this.#entries = new LRUCache<string, Entry>({
      max: settings.maxEntries,
      ttl: settings.ttlMs,
      dispose: (entry, hash) => {
        const id = entry.found?.apiKey.id;
        if (id !== undefined && this.#hashOfKey.get(id) === hash) {
          this.#hashOfKey.delete(id);
        }
      },
    });
  }

  /** Secrets remembered now, found or not (expired entries not yet swept included). */
  get size(): number {
    return this.#entries.size;
  }

  async findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined> {
    const entry = this.#entries.get(secretHash);
    if (entry) {
      return entry.found ?? undefined;
    }
    const shared = this.#inFlight.get(secretHash);
    if (shared) {
      return shared;
    }
    const read = this.#read(secretHash);
    this.#inFlight.set(secretHash, read);
    const settled = () => {
      if (this.#inFlight.get(secretHash) === read) {
        this.#inFlight.delete(secretHash);
      }
    };
    read.then(settled, settled);
    return read;
  }

  async #read(secretHash: string): Promise<KeyOfSecret | undefined> {
    const changesBefore = this.#changesHeard;
    const found = await this.store.findApiKeyBySecretHash(secretHash);
    if (this.#changesHeard === changesBefore) {
      const ttl = found ? this.settings.ttlMs : this.settings.negativeTtlMs;
      this.#entries.set(secretHash, { found: found ?? null }, { ttl });
      if (found) {
        this.#hashOfKey.set(found.apiKey.id, secretHash);
      }
    }
    return found;
  }

  /** Forgets what a change may have made stale: the changed key, or everything on `reset`. */
  invalidate(event: KeyChangeEvent): void {
    this.#changesHeard += 1;
    // Reads in flight may predate the change: later lookups start their own.
    this.#inFlight.clear();
    if (event.type === 'reset') {
      this.#entries.clear();
      return;
    }
    if (event.change.kind === 'api_key') {
      const hash = this.#hashOfKey.get(event.change.id);
      if (hash !== undefined) {
        this.#entries.delete(hash);
      }
    }
  }
}

/**
 * A key cache in front of `store`, told of every change to keys by any process on its database; undefined when
 * `settings.maxEntries` is 0. Resolves once it listens (it throws when the store cannot), with the function that
 * stops listening.
 */
export async function startKeyCache(
  store: Store,
  settings: KeyCacheSettings,
  logger: Logger,
): Promise<{ cache: KeyCache | undefined; stop: () => Promise<void> }> {
  if (settings.maxEntries === 0) {
    return { cache: undefined, stop: async () => {} };
  }
  const cache = new KeyCache(store, settings);
  const stop = await store.watchKeyChanges((event) => {
    if (event.type === 'reset') {
      logger.info('key cache cleared: changes may have been missed (a lost notification connection, another process)');
    }
    cache.invalidate(event);
  });
  return { cache, stop };
}
