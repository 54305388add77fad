import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  API_KEYS_PATH,
  authHeaders,
  createTestKey,
  expectError,
  jsonPostHeaders,
  postRaw,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '../../testing/index.js';

const running: TestServer[] = [];

async function serverWith(perMinute: number, burst: number, authFailuresPerMinute = 0): Promise<TestServer> {
  const server = await startTestServer({ rateLimits: { perMinute, burst, authFailuresPerMinute } });
  running.push(server);
  return server;
}

/** `count` list requests of one admin key, sent at once; resolves with their statuses. */
async function listAtOnce(server: TestServer, adminKey: string, count: number): Promise<number[]> {
  const replies = await Promise.all(
    Array.from({ length: count }, () => server.request(API_KEYS_PATH, { headers: authHeaders(adminKey) })),
  );
  return replies.map(({ response }) => response.status);
}

const countOf = (statuses: number[], status: number) => statuses.filter((value) => value === status).length;

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

describe('rate limits per admin key', () => {
  it('send the budget on every response: the limit, what remains, and when it is whole again', async () => {
    const server = await serverWith(1200, 100);

    const first = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });
    const second = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });

    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('ratelimit-limit')).toBe('1200');
    expect(first.response.headers.get('ratelimit-remaining')).toBe('99');
    expect(second.response.headers.get('ratelimit-remaining')).toBe('98');
    expect(Number(first.response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect(Number(first.response.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
  });

  it('let a burst through at once, refuse the rest with 429, and serve again once the burst window has passed', async () => {
    // 600 a minute refill a burst of 5 in half a second: the burst window is one second.
    const server = await serverWith(600, 5);

    const statuses = await listAtOnce(server, server.adminKey, 8);

    expect(countOf(statuses, 200)).toBe(5);
    expect(countOf(statuses, 429)).toBe(3);
    const refused = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });
    expectError(refused, {
      operationId: 'listApiKeys',
      status: 429,
      type: 'rate_limit_error',
      message: 'too many requests for this admin key; retry after 1 second',
    });
    expect(refused.response.headers.get('retry-after')).toBe('1');

    await sleep(Number(refused.response.headers.get('retry-after')) * 1000 + 100);
    expect(await listAtOnce(server, server.adminKey, 5)).toEqual([200, 200, 200, 200, 200]);
  });

  it('hold an admin key to its requests a minute even when each burst is small', async () => {
    const server = await serverWith(4, 4);

    expect(await listAtOnce(server, server.adminKey, 4)).toEqual([200, 200, 200, 200]);
    const refused = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });

    expect(refused.response.status).toBe(429);
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(1);
    expect(Number(refused.response.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it("never let one admin key's flood limit another organization's requests", async () => {
    const server = await serverWith(60, 10);
    const other = await server.createOrganization('bystander');

    const [flood, bystander] = await Promise.all([
      listAtOnce(server, server.adminKey, 60),
      listAtOnce(server, other.adminKey, 10),
    ]);

    expect(countOf(flood, 429)).toBe(50);
    expect(bystander).toEqual(Array(10).fill(200));
  });

  it('refuse an update over the budget before it changes anything', async () => {
    const server = await serverWith(60, 1);
    const organization = await server.createOrganization();
    const { apiKey } = await createTestKey(server.store, organization.id, { name: 'before' });
    const headers = jsonPostHeaders(organization.adminKey);
    await postRaw(server, apiKey.id, JSON.stringify({ name: 'first' }), headers);
    const before = await snapshotKeys(server.store, organization.id);

    const refused = await postRaw(server, apiKey.id, JSON.stringify({ name: 'refused' }), headers);

    expect(refused.response.status).toBe(429);
    expect(await snapshotKeys(server.store, organization.id)).toEqual(before);
  });

  it('are off with a limit of 0: no budget headers, no refusals', async () => {
    const server = await serverWith(0, 1);

    const statuses = await listAtOnce(server, server.adminKey, 30);
    const reply = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });

    expect(statuses).toEqual(Array(30).fill(200));
    expect(reply.response.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('failed authentications per address', () => {
  const GUESS = 'sk-adm-guessguessguessguessguessguessguessgue';

  it('answer 401 up to the limit, then 429 with retry-after', async () => {
    const server = await serverWith(0, 1, 3);

    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await server.request(API_KEYS_PATH, { headers: authHeaders(GUESS) })).response.status);
    }
    const refused = await server.request(API_KEYS_PATH, { headers: authHeaders(GUESS) });

    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expectError(refused, {
      operationId: 'listApiKeys',
      status: 429,
      type: 'rate_limit_error',
      message: /^too many failed authentications; retry after \d+ seconds?$/,
    });
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(1);
  });

  it('count a request without x-api-key as a failure too', async () => {
    const server = await serverWith(0, 1, 1);
    const headers = { 'vendor-version': authHeaders('x')['vendor-version'] as string };

    const first = await server.request(API_KEYS_PATH, { headers });
    const second = await server.request(API_KEYS_PATH, { headers });

    expect([first.response.status, second.response.status]).toEqual([401, 429]);
  });

  it('never refuse a valid admin key from an address that keeps failing', async () => {
    const server = await serverWith(0, 1, 2);
    for (let i = 0; i < 4; i++) {
      await server.request(API_KEYS_PATH, { headers: authHeaders(GUESS) });
    }

    const valid = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });
    const guessAgain = await server.request(API_KEYS_PATH, { headers: authHeaders(GUESS) });

    expect(valid.response.status).toBe(200);
    expect(guessAgain.response.status).toBe(429);
  });
});
