import { startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminClient,
  ConnectionError,
  createAdminClient,
  createVerifierClient,
  type VerifierClient,
} from '../src/index.js';
import { waitFor } from './support/fake-verifier-server.js';

// The caching verifier against the real server: its change feed (2 s heartbeats), its answers from memory, how a
// change made through the API reaches it, and its usage reports.

/** A request the verifier sent, with the status it got back. */
interface Exchange {
  method: string;
  path: string;
  status: number;
}

let server: TestServer;
let organization: TestOrganization;
let admin: AdminClient;
let verifierSecret: string;
const verifiers: VerifierClient[] = [];

/** A caching verifier of the server with the verifier key, recording its exchanges, once its feed is live. */
async function liveVerifier(cache: Parameters<typeof createVerifierClient>[0]['cache'] = true) {
  const exchanges: Exchange[] = [];
  const verifier = createVerifierClient({
    baseUrl: server.baseUrl,
    apiKey: verifierSecret,
    maxRetries: 0,
    cache,
    async fetch(request) {
      const response = await fetch(request);
      exchanges.push({ method: request.method, path: new URL(request.url).pathname, status: response.status });
      return response;
    },
  });
  verifiers.push(verifier);
  await waitFor(() => verifier.cache?.live === true, 10_000, 'the feed to be live');
  const verifications = () => exchanges.filter((exchange) => exchange.path === '/v1/keys/verify').length;
  return { verifier, exchanges, verifications };
}

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('caching verifier');
  admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  ({ secret: verifierSecret } = await server.store.createVerifierKey({
    organizationId: organization.id,
    name: 'caching gateway',
  }));
});

afterEach(async () => {
  await Promise.all(verifiers.splice(0).map((verifier) => verifier.close()));
});

afterAll(async () => {
  await server?.close();
});

describe('caching verifier, against the server', () => {
  it('subscribes with a verifier key and answers a second verification from memory', async () => {
    const created = await admin.apiKeys.create({ name: 'remembered' });
    const { verifier, exchanges, verifications } = await liveVerifier();

    const first = await verifier.keys.verify(created.key);
    const second = await verifier.keys.verify(created.key);

    expect(second).toEqual(first);
    expect(first).toMatchObject({ valid: true, code: 'VALID', key: { id: created.id } });
    expect(verifications()).toBe(1);
    expect(exchanges[0]).toEqual({ method: 'GET', path: '/v1/keys/changes', status: 200 });
  });

  it('hears a status change made through the API within a second, and answers it', async () => {
    const created = await admin.apiKeys.create({ name: 'soon inactive' });
    const { verifier } = await liveVerifier();
    await verifier.keys.verify(created.key);
    expect(verifier.cache?.size).toBe(1);

    await admin.apiKeys.update(created.id, { status: 'inactive' });
    const changedAt = performance.now();
    await waitFor(() => verifier.cache?.size === 0, 2_000, 'the change to be heard');

    expect(performance.now() - changedAt).toBeLessThan(1_000);
    expect(await verifier.keys.verify(created.key)).toMatchObject({ valid: false, code: 'INACTIVE' });
  });

  it('forgets a rotated key, whose answer then carries the end of its grace period', async () => {
    const created = await admin.apiKeys.create({ name: 'rotated' });
    const { verifier, verifications } = await liveVerifier();
    await verifier.keys.verify(created.key);

    const rotated = await admin.apiKeys.rotate(created.id, { grace_period_seconds: 60 });
    await waitFor(() => verifier.cache?.size === 0, 2_000, 'the rotation to be heard');
    const verdict = await verifier.keys.verify(created.key);

    expect(verdict).toMatchObject({ valid: true, key: { id: created.id, expires_at: expect.any(String) } });
    expect(verdict.key?.expires_at).toBe(rotated.rotated_api_key.expires_at);
    expect(verifications()).toBe(2);
  });

  it('stays live across heartbeats (2 s), with nothing else happening', async () => {
    const { verifier } = await liveVerifier();

    await new Promise((resolve) => setTimeout(resolve, 5_500));

    expect(verifier.cache?.live).toBe(true);
  });

  it('reports the keys it answered from memory, which the server accepts', async () => {
    const created = await admin.apiKeys.create({ name: 'used from memory' });
    const { verifier, exchanges } = await liveVerifier();
    await verifier.keys.verify(created.key);
    await verifier.keys.verify(created.key);

    await verifier.close();

    expect(exchanges.filter((exchange) => exchange.path === '/v1/keys/usage')).toEqual([
      { method: 'POST', path: '/v1/keys/usage', status: 200 },
    ]);
    await server.flushKeyUsage();
    expect((await admin.apiKeys.retrieve(created.id)).last_used_at).not.toBeNull();
  });
});

describe('caching verifier, when the server goes away', () => {
  it('loses the feed, empties the cache, and fails as without a cache', async () => {
    const own = await startTestServer();
    const ownOrganization = await own.createOrganization('short-lived');
    const ownAdmin = createAdminClient({ baseUrl: own.baseUrl, apiKey: ownOrganization.adminKey });
    const created = await ownAdmin.apiKeys.create({ name: 'remembered' });
    const verifier = createVerifierClient({
      baseUrl: own.baseUrl,
      apiKey: ownOrganization.adminKey,
      maxRetries: 0,
      cache: true,
    });
    verifiers.push(verifier);
    await waitFor(() => verifier.cache?.live === true, 10_000, 'the feed to be live');
    await verifier.keys.verify(created.key);
    expect(verifier.cache?.size).toBe(1);

    await own.close();
    await waitFor(() => verifier.cache?.live === false, 5_000, 'the feed to be lost');

    expect(verifier.cache?.size).toBe(0);
    await expect(verifier.keys.verify(created.key)).rejects.toBeInstanceOf(ConnectionError);
  });
});
