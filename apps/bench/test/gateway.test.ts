import { fileURLToPath } from 'node:url';
import { createAdminClient } from '@apikeys/client';
import {
  DEFAULT_ORGANIZATION,
  type StartedServerProcess,
  startServerProcess,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The bench's gateway script (src/gateway/gateway.ts), run from source with the tsx loader as a child process, in
// its floor form and in its cached form in front of a real key server.

const benchDir = fileURLToPath(new URL('..', import.meta.url));

/** Starts the gateway in `form`; resolves once it has logged `ready` (cached: once its change feed is live). */
const startGateway = (env: Record<string, string>) =>
  startServerProcess(
    { script: { path: 'src/gateway/gateway.ts', cwd: benchDir, nodeFlags: ['--import', 'tsx'] }, env },
    20_000,
  );

const orders = async (gateway: StartedServerProcess, key?: string) => {
  const response = await fetch(`${gateway.baseUrl}/orders`, key === undefined ? {} : { headers: { 'x-api-key': key } });
  return { status: response.status, body: await response.json() };
};

describe('the gateway script, floor form', () => {
  let gateway: StartedServerProcess;

  beforeAll(async () => {
    gateway = await startGateway({ GATEWAY_FORM: 'floor', FLOOR_KEY: 'sk-api-floor' });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers 401 without a key and with another key, 200 with its one key', async () => {
    expect((await orders(gateway)).status).toBe(401);
    expect((await orders(gateway, 'sk-api-other')).status).toBe(401);
    expect(await orders(gateway, 'sk-api-floor')).toEqual({ status: 200, body: { orders: [], key: 'apikey_floor' } });
  });
});

describe('the gateway script, cached form, in front of a key server', () => {
  let server: TestServer;
  let gateway: StartedServerProcess;
  let secret: string;

  beforeAll(async () => {
    server = await startTestServer();
    const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: server.adminKey });
    secret = (await admin.apiKeys.create({ name: 'customer' })).key;
    const organizationId = DEFAULT_ORGANIZATION.id;
    const verifier = await server.store.createVerifierKey({ organizationId, name: 'bench gateway test' });
    gateway = await startGateway({
      GATEWAY_FORM: 'cached',
      KEY_SERVER_URL: server.baseUrl,
      VERIFIER_KEY: verifier.secret,
    });
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await server?.close();
  });

  it('answers 401 MISSING_KEY without a key and NOT_FOUND with an unknown one', async () => {
    expect(await orders(gateway)).toEqual({ status: 401, body: { error: 'MISSING_KEY' } });
    expect(await orders(gateway, `sk-api-${'N'.repeat(43)}`)).toEqual({ status: 401, body: { error: 'NOT_FOUND' } });
  });

  it('answers 200 with a valid key, again and again', async () => {
    for (let pass = 0; pass < 3; pass++) {
      const { status, body } = await orders(gateway, secret);

      expect(status).toBe(200);
      expect(body).toEqual({ orders: [], key: expect.stringMatching(/^apikey_/) });
    }
  });
});

describe('the gateway script, cached form with a permission requirement, in front of a key server', () => {
  let server: TestServer;
  let gateway: StartedServerProcess;
  let satisfying: string;
  let lacking: string;

  beforeAll(async () => {
    server = await startTestServer();
    const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: server.adminKey });
    const permissions = ['documents.read', 'documents.write'];
    satisfying = (await admin.apiKeys.create({ name: 'writer', permissions })).key;
    lacking = (await admin.apiKeys.create({ name: 'reader', permissions: ['documents.read'] })).key;
    const organizationId = DEFAULT_ORGANIZATION.id;
    const verifier = await server.store.createVerifierKey({ organizationId, name: 'bench gateway test' });
    gateway = await startGateway({
      GATEWAY_FORM: 'cached-requirement',
      GATEWAY_REQUIREMENT: 'documents.read AND (documents.write OR admin.*)',
      KEY_SERVER_URL: server.baseUrl,
      VERIFIER_KEY: verifier.secret,
    });
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await server?.close();
  });

  it('answers 200 with a key that satisfies the requirement, again and again (from memory)', async () => {
    for (let pass = 0; pass < 3; pass++) {
      const { status, body } = await orders(gateway, satisfying);

      expect(status).toBe(200);
      expect(body).toEqual({ orders: [], key: expect.stringMatching(/^apikey_/) });
    }
  });

  it('answers 401 INSUFFICIENT_PERMISSIONS with a valid key that does not satisfy it', async () => {
    for (let pass = 0; pass < 2; pass++) {
      expect(await orders(gateway, lacking)).toEqual({ status: 401, body: { error: 'INSUFFICIENT_PERMISSIONS' } });
    }
  });
});
