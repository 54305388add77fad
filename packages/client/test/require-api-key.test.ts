import { readFileSync } from 'node:fs';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/index.js';
import { waitFor } from './support/fake-verifier-server.js';
import { getOrders, type ReadmeGateway, startReadmeGateway } from './support/readme-gateway.js';

// The README's gateway middleware (examples/require-api-key.ts, quoted verbatim in the root README and the client's),
// protecting a route of a real Express app in front of the real server, with a caching verifier as the README builds
// it. When the key server cannot answer: require-api-key-outage.test.ts.

let server: TestServer;
let gateway: ReadmeGateway;
let secrets: { active: string; inactive: string };

beforeAll(async () => {
  server = await startTestServer();
  const organization = await server.createOrganization('gateway');
  const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  const active = await admin.apiKeys.create({ name: 'customer' });
  const inactive = await admin.apiKeys.create({ name: 'former customer' });
  await admin.apiKeys.update(inactive.id, { status: 'inactive' });
  secrets = { active: active.key, inactive: inactive.key };
  const { secret } = await server.store.createVerifierKey({ organizationId: organization.id, name: 'gateway' });
  gateway = await startReadmeGateway(server.baseUrl, secret);
});

afterAll(async () => {
  await gateway?.close();
  await server?.close();
});

const get = async (url: string, key?: string) => {
  const { status, text } = await getOrders(url, key);
  return { status, body: JSON.parse(text) };
};

describe('the README gateway middleware', () => {
  it.each([
    ['root README', '../../../README.md'],
    ["client's README", '../README.md'],
  ])('is quoted in the %s as it is in examples/require-api-key.ts', (_, path) => {
    const example = readFileSync(new URL('../examples/require-api-key.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL(path, import.meta.url), 'utf8');
    const start = example.indexOf('/** Lets a request');
    const body = example.slice(start).trim();

    expect(start).toBeGreaterThan(0);
    expect(readme).toContain(body);
    expect(body.split('\n').length).toBeLessThanOrEqual(17);
  });

  it('lets a request with a valid key through, with the key it verified', async () => {
    const { status, body } = await get(gateway.url, secrets.active);

    expect(status).toBe(200);
    expect(body).toEqual({ orders: [], key: expect.stringMatching(/^apikey_/) });
  });

  it("lets the same key through again from the verifier's memory once its change feed is live", async () => {
    await waitFor(() => gateway.verifier.cache?.live === true, 10_000, 'the feed to be live');
    await get(gateway.url, secrets.active);
    const hits = gateway.verifier.cache?.hits ?? 0;

    const { status } = await get(gateway.url, secrets.active);

    expect(status).toBe(200);
    expect(gateway.verifier.cache?.hits).toBe(hits + 1);
  });

  it.each([
    ['no key', undefined, 'MISSING_KEY'],
    ['an inactive key', 'inactive', 'INACTIVE'],
    ['an unknown key', `sk-api-${'N'.repeat(43)}`, 'NOT_FOUND'],
  ])('refuses %s with 401 and the reason', async (_, key, error) => {
    const secret = key === 'inactive' ? secrets.inactive : key;

    expect(await get(gateway.url, secret)).toEqual({ status: 401, body: { error } });
  });
});
