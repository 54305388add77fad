import { MALFORMED_PERMISSION_QUERY_CASES, PERMISSION_QUERY_CASES } from '@apikeys/permissions/testing';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysError, createAdminClient, createVerifierClient, type VerifierClient } from '../src/index.js';
import { waitFor } from './support/fake-verifier-server.js';

// The caching verifier decides a permission requirement from memory exactly as the server does: the evaluator's
// table of cases (@apikeys/permissions/testing), each answered by both and compared, without asking the server.

let server: TestServer;
let plain: VerifierClient;
let cached: VerifierClient;
let verifications = 0;
/** The secret of a key holding each set of permissions of the table (by the set, joined). */
const secrets = new Map<string, string>();
let inactiveSecret: string;

beforeAll(async () => {
  server = await startTestServer();
  const organization = await server.createOrganization('permission requirements');
  const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  const { secret: verifierKey } = await server.store.createVerifierKey({
    organizationId: organization.id,
    name: 'gateway',
  });
  for (const { held } of PERMISSION_QUERY_CASES) {
    if (!secrets.has(held.join())) {
      secrets.set(
        held.join(),
        (await admin.apiKeys.create({ name: `holds ${held.join()}`, permissions: [...new Set(held)] })).key,
      );
    }
  }
  const inactive = await admin.apiKeys.create({ name: 'inactive', permissions: ['*'] });
  await admin.apiKeys.update(inactive.id, { status: 'inactive' });
  inactiveSecret = inactive.key;
  plain = createVerifierClient({ baseUrl: server.baseUrl, apiKey: verifierKey, maxRetries: 0 });
  cached = createVerifierClient({
    baseUrl: server.baseUrl,
    apiKey: verifierKey,
    maxRetries: 0,
    cache: true,
    async fetch(request) {
      if (new URL(request.url).pathname === '/v1/keys/verify') {
        verifications += 1;
      }
      return fetch(request);
    },
  });
  await waitFor(() => cached.cache?.live === true, 10_000, 'the feed to be live');
  // Each secret once: from then on the caching verifier answers from memory.
  for (const secret of [...secrets.values(), inactiveSecret]) {
    await cached.keys.verify(secret);
  }
});

afterAll(async () => {
  await cached?.close();
  await server?.close();
});

describe('caching verifier, permission requirements', () => {
  it('answers every case of the table as the server does, from memory', async () => {
    const before = verifications;
    for (const { query, held, expected } of PERMISSION_QUERY_CASES) {
      const secret = secrets.get(held.join()) as string;
      const fromServer = await plain.keys.verify(secret, { permissions: query });
      const fromMemory = await cached.keys.verify(secret, { permissions: query });

      expect(fromMemory, `${query} with ${held.join()}`).toEqual(fromServer);
      expect(fromMemory.code, `${query} with ${held.join()}`).toBe(expected ? 'VALID' : 'INSUFFICIENT_PERMISSIONS');
    }
    expect(verifications - before).toBe(0);
  });

  it('answers the other codes first: an inactive key is INACTIVE whatever the requirement', async () => {
    const fromMemory = await cached.keys.verify(inactiveSecret, { permissions: 'nothing.held' });

    expect(fromMemory).toEqual(await plain.keys.verify(inactiveSecret, { permissions: 'nothing.held' }));
    expect(fromMemory.code).toBe('INACTIVE');
  });

  it('leaves a malformed requirement to the server, and rejects as the client without a cache does', async () => {
    const secret = secrets.values().next().value as string;
    for (const { query } of MALFORMED_PERMISSION_QUERY_CASES.slice(0, 8)) {
      const fromServer = await plain.keys.verify(secret, { permissions: query }).catch((error: unknown) => error);
      const fromCache = await cached.keys.verify(secret, { permissions: query }).catch((error: unknown) => error);

      expect(fromServer, query).toBeInstanceOf(ApiKeysError);
      expect(fromCache, query).toBeInstanceOf(ApiKeysError);
      expect((fromCache as ApiKeysError).status, query).toBe(400);
      expect((fromCache as ApiKeysError).message, query).toBe((fromServer as ApiKeysError).message);
    }
  });
});
