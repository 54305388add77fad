import type { Credential, KeyChange, KeyOfSecret } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import { KeyCache, type KeyCacheSettings } from '../../src/verification/key-cache.js';

/** A change to a key of the default organization, as the store announces it. */
const changeOf = (kind: KeyChange['kind'], id: string): KeyChange => ({
  kind,
  id,
  organizationId: 'org_default',
  change: 'updated',
});

const SETTINGS: KeyCacheSettings = { maxEntries: 100, ttlMs: 60_000, negativeTtlMs: 60_000 };

const keyOf = (id: string, name = 'cached'): KeyOfSecret => ({
  organizationId: 'org_cache',
  apiKey: {
    id,
    name,
    workspaceId: null,
    scope: 'workspace',
    createdAt: 1,
    createdBy: { type: 'user', id: 'user_alice' },
    partialKeyHint: null,
    status: 'active',
    expiresAt: null,
    principal: null,
  },
});

/** A store of keys by hash that counts its reads, and can hold the next one until released. */
function countingStore(keys: Record<string, KeyOfSecret>) {
  const reads: string[] = [];
  let held: (() => void) | undefined;
  let holding = false;
  return {
    reads,
    keys,
    hold() {
      holding = true;
    },
    release() {
      held?.();
    },
    async findCredential(): Promise<Credential> {
      throw new Error('this store holds API keys only');
    },
    async findApiKeyBySecretHash(hash: string) {
      reads.push(hash);
      // What the read sees is read now, before any hold: a held read answers with what was stored when it began.
      const found = keys[hash];
      if (holding) {
        holding = false;
        await new Promise<void>((resolve) => {
          held = resolve;
        });
      }
      return found;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('KeyCache', () => {
  it('reads a secret once, then answers from memory, found or not', async () => {
    const store = countingStore({ h1: keyOf('apikey_1') });
    const cache = new KeyCache(store, SETTINGS);

    const first = await cache.findApiKeyBySecretHash('h1');
    const again = await cache.findApiKeyBySecretHash('h1');
    const unknown = [await cache.findApiKeyBySecretHash('nope'), await cache.findApiKeyBySecretHash('nope')];

    expect(first).toEqual(keyOf('apikey_1'));
    expect(again).toBe(first);
    expect(unknown).toEqual([undefined, undefined]);
    expect(store.reads).toEqual(['h1', 'nope']);
  });

  it('shares one read among concurrent lookups of one secret', async () => {
    const store = countingStore({ h1: keyOf('apikey_1') });
    const cache = new KeyCache(store, SETTINGS);

    const found = await Promise.all(Array.from({ length: 20 }, () => cache.findApiKeyBySecretHash('h1')));

    expect(new Set(found.map((key) => key?.apiKey.id))).toEqual(new Set(['apikey_1']));
    expect(store.reads).toEqual(['h1']);
  });

  it('forgets a key when a change to it is heard, and nothing else', async () => {
    const store = countingStore({ h1: keyOf('apikey_1'), h2: keyOf('apikey_2') });
    const cache = new KeyCache(store, SETTINGS);
    await cache.findApiKeyBySecretHash('h1');
    await cache.findApiKeyBySecretHash('h2');
    store.keys.h1 = keyOf('apikey_1', 'renamed');

    cache.invalidate({ type: 'changed', change: changeOf('api_key', 'apikey_1') });
    const renamed = await cache.findApiKeyBySecretHash('h1');
    await cache.findApiKeyBySecretHash('h2');

    expect(renamed?.apiKey.name).toBe('renamed');
    expect(store.reads).toEqual(['h1', 'h2', 'h1']);
  });

  it('forgets everything on reset, and nothing on a change to an admin or verifier key', async () => {
    const store = countingStore({ h1: keyOf('apikey_1') });
    const cache = new KeyCache(store, SETTINGS);
    await cache.findApiKeyBySecretHash('h1');

    cache.invalidate({ type: 'changed', change: changeOf('verifier_key', 'apikey_1') });
    await cache.findApiKeyBySecretHash('h1');
    cache.invalidate({ type: 'reset' });
    await cache.findApiKeyBySecretHash('h1');

    expect(store.reads).toEqual(['h1', 'h1']);
  });

  it('does not remember a read that was in flight when a change was heard, which may predate it', async () => {
    const store = countingStore({ h1: keyOf('apikey_1', 'before') });
    const cache = new KeyCache(store, SETTINGS);
    store.hold();

    const inFlight = cache.findApiKeyBySecretHash('h1');
    await sleep(1);
    store.keys.h1 = keyOf('apikey_1', 'after');
    cache.invalidate({ type: 'changed', change: changeOf('api_key', 'apikey_1') });
    const startedAfter = cache.findApiKeyBySecretHash('h1');
    store.release();

    expect((await inFlight)?.apiKey.name).toBe('before');
    expect((await startedAfter)?.apiKey.name).toBe('after');
    expect((await cache.findApiKeyBySecretHash('h1'))?.apiKey.name).toBe('after');
    expect(store.reads).toEqual(['h1', 'h1']);
  });

  it('trusts a found key for its time to live and an unknown secret for the shorter one', async () => {
    const store = countingStore({ h1: keyOf('apikey_1') });
    const cache = new KeyCache(store, { maxEntries: 100, ttlMs: 400, negativeTtlMs: 100 });
    await cache.findApiKeyBySecretHash('h1');
    await cache.findApiKeyBySecretHash('nope');

    await sleep(200);
    await cache.findApiKeyBySecretHash('h1');
    await cache.findApiKeyBySecretHash('nope');
    await sleep(300);
    await cache.findApiKeyBySecretHash('h1');

    expect(store.reads).toEqual(['h1', 'nope', 'nope', 'h1']);
  });

  it('holds at most maxEntries secrets, forgetting the least recently used', async () => {
    const store = countingStore({});
    const cache = new KeyCache(store, { ...SETTINGS, maxEntries: 3 });

    for (const hash of ['a', 'b', 'c', 'a', 'd', 'e']) {
      await cache.findApiKeyBySecretHash(hash);
    }
    const readsBefore = store.reads.length;
    await cache.findApiKeyBySecretHash('a');
    await cache.findApiKeyBySecretHash('b');

    expect(cache.size).toBe(3);
    expect(store.reads.slice(readsBefore)).toEqual(['b']);
  });
});

const adminKeyOf = (id: string, status: 'active' | 'disabled' = 'active'): Credential => ({
  kind: 'admin_key',
  adminKey: { id, organizationId: 'org_cache', name: 'admin', partialKeyHint: 'sk-ant-admin01-ab...cd', status },
});

/** A store of callers' keys by hash that counts its reads. */
function credentialStore(credentials: Record<string, Credential>) {
  const reads: string[] = [];
  return {
    reads,
    credentials,
    async findApiKeyBySecretHash(): Promise<KeyOfSecret | undefined> {
      throw new Error('this store holds callers’ keys only');
    },
    async findCredential(hash: string): Promise<Credential> {
      reads.push(hash);
      return credentials[hash] ?? { kind: 'unknown' };
    },
  };
}

describe('KeyCache, for callers’ keys', () => {
  it('reads a caller’s key once, then answers from memory', async () => {
    const store = credentialStore({ a1: adminKeyOf('adminkey_1') });
    const cache = new KeyCache(store, SETTINGS);

    const answers = [await cache.findCredential('a1', 'admin'), await cache.findCredential('a1', 'admin')];

    expect(answers).toEqual([adminKeyOf('adminkey_1'), adminKeyOf('adminkey_1')]);
    expect(store.reads).toEqual(['a1']);
  });

  it('forgets an admin key as soon as a change to it is heard, and keeps the others', async () => {
    const store = credentialStore({ a1: adminKeyOf('adminkey_1'), a2: adminKeyOf('adminkey_2') });
    const cache = new KeyCache(store, SETTINGS);
    await cache.findCredential('a1');
    await cache.findCredential('a2');
    store.credentials.a1 = adminKeyOf('adminkey_1', 'disabled');

    cache.invalidate({ type: 'changed', change: changeOf('admin_key', 'adminkey_1') });
    // An API key's change with the same ID names another key: nothing more is forgotten.
    cache.invalidate({ type: 'changed', change: changeOf('api_key', 'adminkey_2') });
    const disabled = await cache.findCredential('a1');
    await cache.findCredential('a2');

    expect(disabled).toEqual(adminKeyOf('adminkey_1', 'disabled'));
    expect(store.reads).toEqual(['a1', 'a2', 'a1']);
  });

  it('remembers an unknown secret for the shorter time to live only, and forgets everything on reset', async () => {
    const store = credentialStore({ a1: adminKeyOf('adminkey_1') });
    const cache = new KeyCache(store, { maxEntries: 100, ttlMs: 60_000, negativeTtlMs: 100 });

    expect(await cache.findCredential('nope')).toEqual({ kind: 'unknown' });
    await cache.findCredential('nope');
    await sleep(150);
    await cache.findCredential('nope');
    await cache.findCredential('a1');
    cache.invalidate({ type: 'reset' });
    await cache.findCredential('a1');

    expect(store.reads).toEqual(['nope', 'nope', 'a1', 'a1']);
  });
});
