import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVerifierClient, VERIFIER_CACHE_DEFAULTS, type VerifierClient } from '../src/index.js';
import { resolveCacheOptions } from '../src/verifier/cache-options.js';
import { loadSecretHasher } from '../src/verifier/secret-hash.js';
import {
  type FakeVerifierServer,
  keyId,
  sleep,
  startFakeVerifierServer,
  valid,
} from './support/fake-verifier-server.js';

// The cache option of createVerifierClient: its defaults, its validation, and that without it nothing changes.

describe('the cache option', () => {
  it('has the documented defaults', () => {
    expect(VERIFIER_CACHE_DEFAULTS).toEqual({
      maxEntries: 10_000,
      maxAgeMs: 60_000,
      negativeTtlMs: 5_000,
      usageReportIntervalMs: 60_000,
    });
    expect(resolveCacheOptions(true)).toEqual(VERIFIER_CACHE_DEFAULTS);
    expect(resolveCacheOptions({ maxAgeMs: 1_000 })).toEqual({ ...VERIFIER_CACHE_DEFAULTS, maxAgeMs: 1_000 });
    expect(resolveCacheOptions(false)).toBeUndefined();
    expect(resolveCacheOptions(undefined)).toBeUndefined();
  });

  it.each([
    ['yes', 'cache must be true, false or an object of cache options'],
    [null, 'cache must be true, false or an object of cache options'],
    [[], 'cache must be true, false or an object of cache options'],
    [{ maxEntries: 0 }, 'cache.maxEntries must be an integer from 1 to 10000000'],
    [{ maxEntries: 1.5 }, 'cache.maxEntries must be an integer from 1 to 10000000'],
    [{ maxEntries: 2 ** 32 }, 'cache.maxEntries must be an integer from 1 to 10000000'],
    [{ maxAgeMs: 0 }, 'cache.maxAgeMs must be a number from 1 to 2147483647'],
    [{ maxAgeMs: Number.POSITIVE_INFINITY }, 'cache.maxAgeMs must be a number from 1 to 2147483647'],
    [{ negativeTtlMs: -1 }, 'cache.negativeTtlMs must be a number from 0 to 2147483647'],
    [{ usageReportIntervalMs: '60000' }, 'cache.usageReportIntervalMs must be a number from 1 to 2147483647'],
    [
      { maxEntry: 10 },
      'cache.maxEntry is not a cache option (maxEntries, maxAgeMs, negativeTtlMs, usageReportIntervalMs)',
    ],
  ])('refuses %j with a TypeError, before anything is sent', (cache, message) => {
    const options = { baseUrl: 'http://127.0.0.1:9', apiKey: 'sk-vfy-test', cache } as Parameters<
      typeof createVerifierClient
    >[0];

    expect(() => createVerifierClient(options)).toThrow(new TypeError(message));
  });

  it('keys verdicts by the SHA-256 of the secret, never the secret', async () => {
    const secret = `sk-api-${'A'.repeat(43)}`;
    const hashSecret = await loadSecretHasher();

    expect(hashSecret(secret)).toBe(createHash('sha256').update(secret).digest('base64url'));
    expect(hashSecret(secret)).not.toContain('sk-api');
  });
});

describe('createVerifierClient without the cache option', () => {
  let server: FakeVerifierServer;
  let verifier: VerifierClient;
  const SECRET = `sk-api-${'A'.repeat(43)}`;

  beforeEach(async () => {
    server = await startFakeVerifierServer();
    server.verdicts.set(SECRET, valid(keyId(1)));
  });

  afterEach(async () => {
    await verifier.close();
    await server.close();
  });

  it.each([
    ['no cache option', undefined],
    ['cache: false', false],
  ])('with %s: asks the server every time, and never subscribes', async (_, cache) => {
    verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', cache });

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);
    await sleep(100);

    expect(server.verifications).toEqual([SECRET, SECRET]);
    expect(server.subscriptions).toEqual([]);
    expect(verifier.cache).toBeUndefined();
    await expect(verifier.close()).resolves.toBeUndefined();
  });
});
