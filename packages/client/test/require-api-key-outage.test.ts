import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort, prepareDatabase, type StartedServerProcess, startServerProcess } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient, VERIFIER_DEFAULTS } from '../src/index.js';
import { waitFor } from './support/fake-verifier-server.js';
import { type GatewayAnswer, getOrders, type ReadmeGateway, startReadmeGateway } from './support/readme-gateway.js';

// The README's gateway (its middleware as written, its verifier with the client's defaults) when the key server
// cannot answer: it fails closed, as its own JSON 503 with retry-after, within the verifier's deadline (the bound
// the READMEs state), never after minutes of retries, and never as Express's HTML error page with a stack trace.
// The key server is a real server process, frozen with SIGSTOP (the kernel still accepts connections, nothing
// answers them), or no server at all (connection refused).

/** The gateway's own hop and a busy machine's late timers, on top of the verifier's deadline. */
const SLACK_MS = 1_000;
const BOUND_MS = VERIFIER_DEFAULTS.deadlineMs + SLACK_MS;
const UNSEEN_KEY = `sk-api-${'U'.repeat(43)}`;

/** What the README's gateway answers when it gets no verdict. */
const FAILED_CLOSED: GatewayAnswer = {
  status: 503,
  contentType: 'application/json; charset=utf-8',
  retryAfter: '1',
  text: JSON.stringify({ error: 'VERIFICATION_UNAVAILABLE' }),
};

/** `GET /orders` with `key`, and how long the answer took; a request that outlives the bound fails. */
async function timedOrders(gateway: ReadmeGateway, key: string): Promise<{ answer: GatewayAnswer; tookMs: number }> {
  const started = performance.now();
  const answer = await getOrders(gateway.url, key, BOUND_MS);
  return { answer, tookMs: performance.now() - started };
}

describe('the README gateway, its key server frozen (SIGSTOP)', () => {
  let directory: string;
  let keyServer: StartedServerProcess | undefined;
  let gateway: ReadmeGateway | undefined;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-frozen-'));
    const prepared = await prepareDatabase(`file:${join(directory, 'keys.sqlite')}`);
    keyServer = await startServerProcess({ env: { DATABASE_URL: prepared.url } });
    const admin = createAdminClient({ baseUrl: keyServer.baseUrl, apiKey: prepared.adminKey });
    const customerKey = (await admin.apiKeys.create({ name: 'customer' })).key;
    // An admin key verifies as a verifier key does ("an admin key works too").
    gateway = await startReadmeGateway(keyServer.baseUrl, prepared.adminKey);
    await waitFor(() => gateway?.verifier.cache?.live === true, 10_000, 'the feed to be live');
    // A key let through from memory: its use waits for the next usage report, which close() sends.
    await getOrders(gateway.url, customerKey);
    expect((await getOrders(gateway.url, customerKey)).status).toBe(200);
    expect(gateway.verifier.cache?.hits).toBe(1);
    keyServer.child.kill('SIGSTOP');
  });

  afterAll(async () => {
    keyServer?.child.kill('SIGCONT');
    await gateway?.close();
    await keyServer?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('answers a request with a key it has not seen as its own JSON 503 with retry-after, within the deadline', async () => {
    const { answer, tookMs } = await timedOrders(gateway as ReadmeGateway, UNSEEN_KEY);

    expect(answer).toEqual(FAILED_CLOSED);
    expect(tookMs).toBeLessThan(BOUND_MS);
  });

  it('shuts down within two deadlines, though its last usage report cannot be sent', async () => {
    const started = performance.now();

    await gateway?.close();

    expect(performance.now() - started).toBeLessThan(2 * VERIFIER_DEFAULTS.deadlineMs + SLACK_MS);
  });
});

describe('the README gateway, its key server down (connection refused)', () => {
  it('answers as its own JSON 503 with retry-after, within the deadline', async () => {
    const gateway = await startReadmeGateway(`http://127.0.0.1:${await closedPort()}`, 'sk-vfy-unused');
    try {
      const { answer, tookMs } = await timedOrders(gateway, UNSEEN_KEY);

      expect(answer).toEqual(FAILED_CLOSED);
      expect(tookMs).toBeLessThan(BOUND_MS);
    } finally {
      await gateway.close();
    }
  });
});
