import type { Credential, KeyChangeEvent, KeyOfSecret, KeyRef, SecretKind, Store } from '@apikeys/store';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { CredentialsByHash } from './credentials-by-hash.js';
import type { KeysBySecret } from './verification-service.js';

/** How much is remembered of secrets, and for how long. */
export interface KeyCacheSettings {
  /** Secrets remembered at most, of each kind (the least recently used are forgotten first); 0 turns it off. */
  maxEntries: number;
  /** How long a found key is trusted without hearing of a change to it: the net under lost notifications. */
  ttlMs: number;
  /** How long a secret that is no key's is remembered: a flood of one unknown secret reaches the store this often. */
  negativeTtlMs: number;
}

export const DEFAULT_KEY_CACHE: KeyCacheSettings = { maxEntries: 50_000, ttlMs: 60_000, negativeTtlMs: 5_000 };

/** A secret's hash as remembered: what it was found to be, or null for a secret that is no key's. */
interface Entry<T> {
  found: T | null;
}

/**
 * What the store answers for secrets' hashes, remembered: bounded (LRU), each entry trusted for a time to live, and
 * forgotten as soon as a change to the key it names is heard (`invalidate`). Concurrent lookups of one hash share
 * one read. A read that was in flight when any change was heard answers its caller but is not remembered, since it
 * may predate the change.
 */
class SecretLookups<T extends object> {
  readonly #entries: LRUCache<string, Entry<T>>;
  /** The hash each remembered key was found by (`kind:id`), to forget it when the key changes. */
  readonly #hashOfKey = new Map<string, string>();
  readonly #inFlight = new Map<string, Promise<T | undefined>>();
  /** Counts the changes heard: a read remembers its result only if none was heard while it ran. */
  #changesHeard = 0;

  constructor(
    private readonly settings: KeyCacheSettings,
    /** The key a found value names, whose changes make it stale; undefined for a value no change can affect. */
    private readonly keyOf: (found: T) => KeyRef | undefined,
  ) {
    this.#entries = new LRUCache<string, Entry<T>>({
      max: settings.maxEntries,
      ttl: settings.ttlMs,
      dispose: (entry, hash) => {
        const key = this.#keyName(entry.found);
        if (key !== undefined && this.#hashOfKey.get(key) === hash) {
          this.#hashOfKey.delete(key);
        }
      },
    });
  }

  get size(): number {
    return this.#entries.size;
  }

  find(hash: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    const entry = this.#entries.get(hash);
    if (entry) {
      return Promise.resolve(entry.found ?? undefined);
    }
    const shared = this.#inFlight.get(hash);
    if (shared) {
      return shared;
    }
    const reading = this.#read(hash, read);
    this.#inFlight.set(hash, reading);
    const settled = () => {
      if (this.#inFlight.get(hash) === reading) {
        this.#inFlight.delete(hash);
      }
    };
    reading.then(settled, settled);
    return reading;
  }

  async #read(hash: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    const changesBefore = this.#changesHeard;
    const found = await read();
    if (this.#changesHeard === changesBefore) {
      const ttl = found ? this.settings.ttlMs : this.settings.negativeTtlMs;
      this.#entries.set(hash, { found: found ?? null }, { ttl });
      const key = this.#keyName(found ?? null);
      if (key !== undefined) {
        this.#hashOfKey.set(key, hash);
      }
    }
    return found;
  }

  invalidate(event: KeyChangeEvent): void {
    this.#changesHeard += 1;
    // Reads in flight may predate the change: later lookups start their own.
    this.#inFlight.clear();
    if (event.type !== 'changed') {
      this.#entries.clear();
      return;
    }
    const hash = this.#hashOfKey.get(`${event.change.kind}:${event.change.id}`);
    if (hash !== undefined) {
      this.#entries.delete(hash);
    }
  }

  #keyName(found: T | null): string | undefined {
    const key = found && this.keyOf(found);
    return key ? `${key.kind}:${key.id}` : undefined;
  }
}

const UNKNOWN: Credential = { kind: 'unknown' };

/** The admin or verifier key a credential is, whose changes (disabled, enabled) make it stale. */
function credentialKey(credential: Credential): KeyRef | undefined {
  switch (credential.kind) {
    case 'admin_key':
      return { kind: 'admin_key', id: credential.adminKey.id };
    case 'verifier_key':
      return { kind: 'verifier_key', id: credential.verifierKey.id };
    default:
      // A regular API key presented as a credential is refused whatever its status: nothing about it goes stale.
      return undefined;
  }
}

/**
 * The keys of secrets, by hash, in front of the store: the API keys that verification looks up, and the admin and
 * verifier keys that authenticate callers. Each is forgotten as soon as a change to it is heard: this process's
 * changes at once, the others' through the store's notifications (`startKeyCache`).
 */
export class KeyCache implements KeysBySecret, CredentialsByHash {
  readonly #apiKeys: SecretLookups<KeyOfSecret>;
  readonly #credentials: SecretLookups<Credential>;

  constructor(
    private readonly store: KeysBySecret & CredentialsByHash,
    settings: KeyCacheSettings,
  ) {
    this.#apiKeys = new SecretLookups(settings, (found) => ({ kind: 'api_key', id: found.apiKey.id }));
    this.#credentials = new SecretLookups(settings, credentialKey);
  }

  /** Secrets remembered now, found or not, of both kinds (expired entries not yet swept included). */
  get size(): number {
    return this.#apiKeys.size + this.#credentials.size;
  }

  findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined> {
    return this.#apiKeys.find(secretHash, () => this.store.findApiKeyBySecretHash(secretHash));
  }

  /** A hash names one secret, and its kind is the secret's prefix: the hash alone is the entry's key. */
  async findCredential(secretHash: string, kind?: SecretKind): Promise<Credential> {
    const found = await this.#credentials.find(secretHash, async () => {
      const credential = await this.store.findCredential(secretHash, kind);
      return credential.kind === 'unknown' ? undefined : credential;
    });
    return found ?? UNKNOWN;
  }

  /** Forgets what a change may have made stale: the changed key, or everything on `reset`. */
  invalidate(event: KeyChangeEvent): void {
    this.#apiKeys.invalidate(event);
    this.#credentials.invalidate(event);
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
    if (event.type === 'lost') {
      logger.warn('key change notifications lost: reconnecting; the key cache starts afresh');
    } else if (event.type === 'reset') {
      logger.info('key cache cleared: changes may have been missed (a lost notification connection, another process)');
    }
    cache.invalidate(event);
  });
  return { cache, stop };
}
