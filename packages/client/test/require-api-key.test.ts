import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedPort, startTestServer, type TestServer } from '@apikeys/server/testing';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireApiKey } from '../examples/require-api-key.js';
import { createAdminClient, createVerifierClient, type VerifierClient } from '../src/index.js';
import { waitFor } from './support/fake-verifier-server.js';

// The README's gateway middleware (examples/require-api-key.ts, quoted there verbatim), protecting a route of a real
// Express app in front of the real server, with a caching verifier as the README builds it.

let server: TestServer;
let gateway: Gateway;
let secrets: { active: string; inactive: string };

/** A gateway: its HTTP server, its URL, and the verifier it asks. */
interface Gateway {
  server: Server;
  url: string;
  verifier: VerifierClient;
  close(): Promise<void>;
}

/** An Express app whose `/orders` the middleware protects, verifying with `verifierUrl`. */
async function startGateway(verifierUrl: string, verifierKey: string): Promise<Gateway> {
  const app = express();
  const verifier = createVerifierClient({
    baseUrl: verifierUrl,
    apiKey: verifierKey,
    maxRetries: 0,
    timeoutMs: 2000,
    cache: true,
  });
  app.get('/orders', requireApiKey(verifier), (_req, res) => {
    res.json({ orders: [], key: res.locals.apiKey.id });
  });
  app.use(((_error, _req, res, _next) => {
    res.status(503).json({ error: 'verification unavailable' });
  }) as express.ErrorRequestHandler);
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  return {
    server: listening,
    url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
    verifier,
    async close() {
      await new Promise((resolve) => listening.close(resolve));
      await verifier.close();
    },
  };
}

beforeAll(async () => {
  server = await startTestServer();
  const organization = await server.createOrganization('gateway');
  const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  const active = await admin.apiKeys.create({ name: 'customer' });
  const inactive = await admin.apiKeys.create({ name: 'former customer' });
  await admin.apiKeys.update(inactive.id, { status: 'inactive' });
  secrets = { active: active.key, inactive: inactive.key };
  const { secret } = await server.store.createVerifierKey({ organizationId: organization.id, name: 'gateway' });
  gateway = await startGateway(server.baseUrl, secret);
});

afterAll(async () => {
  await gateway?.close();
  await server?.close();
});

const get = async (url: string, key?: string) => {
  const response = await fetch(`${url}/orders`, key === undefined ? {} : { headers: { 'x-api-key': key } });
  return { status: response.status, body: await response.json() };
};

describe('the README gateway middleware', () => {
  it('is quoted in the README as it is in examples/require-api-key.ts', () => {
    const example = readFileSync(new URL('../examples/require-api-key.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const body = example.slice(example.indexOf('/** Lets a request'));

    expect(readme).toContain(body.trim());
    expect(body.trim().split('\n').length).toBeLessThanOrEqual(17);
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

  it('fails closed when the key service cannot be reached', async () => {
    const down = await startGateway(`http://127.0.0.1:${await closedPort()}`, 'sk-vfy-unused');
    try {
      expect(await get(down.url, secrets.active)).toEqual({
        status: 503,
        body: { error: 'verification unavailable' },
      });
    } finally {
      await down.close();
    }
  });
});
