import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_ORGANIZATION, openStore } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEYS_PATH,
  authHeaders,
  createTestDatabase,
  fetchText,
  type LogLine,
  type PrivateRedis,
  parsePrometheusText,
  postgresAvailable,
  type ServerProcess,
  type StartedServerProcess,
  startPrivateRedis,
  startServerProcess,
  type TestDatabase,
} from '../../testing/index.js';

const PER_MINUTE = 10;
const AUTH_FAILURES_PER_MINUTE = 4;
const GUESS = 'sk-adm-guessguessguessguessguessguessguessgue';
const UNLIMITED = 'apikeys_rate_limit_unlimited_requests_total';
/** Requests each replica serves while Redis is down: many times every limit, each let through uncounted. */
const REQUESTS_WHILE_DOWN = 6 * PER_MINUTE;
const FAILURES_WHILE_DOWN = 3 * AUTH_FAILURES_PER_MINUTE;

const isUnlimitedWarning = (line: LogLine) => String(line.msg).startsWith('rate limiter unavailable');
const isConnectionWarning = (line: LogLine) => line.msg === 'rate limiter: Redis connection error';
const isBackLine = (line: LogLine) => line.msg === 'rate limiter back: requests are limited again';
const requestLines = (server: ServerProcess) => server.lines.filter((line) => line.msg === 'request').length;

/** Waits until `server` has logged `count` request lines: every line it logged before them is then in `lines`. */
async function waitForRequestLines(server: ServerProcess, count: number): Promise<void> {
  await server.waitForLine(() => requestLines(server) >= count, 20_000);
}

describe.runIf(await postgresAvailable())('rate limits shared by two replicas through Redis', () => {
  let redis: PrivateRedis;
  let database: TestDatabase;
  const replicas: StartedServerProcess[] = [];
  const metricsUrls: string[] = [];
  let keyA = '';
  let keyB = '';

  const list = (replica: StartedServerProcess, adminKey: string) =>
    fetchText(`${replica.baseUrl}${API_KEYS_PATH}?limit=1`, { headers: authHeaders(adminKey) });
  const replica = (i: number) => replicas[i % 2] as StartedServerProcess;
  /** Each replica's count of requests let through uncounted, per limit, from its own /metrics. */
  const unlimitedCounts = () =>
    Promise.all(
      metricsUrls.map(async (url) => {
        const exposition = parsePrometheusText((await fetchText(`${url}/metrics`)).text);
        return {
          admin_key: exposition.sum(UNLIMITED, { limit: 'admin_key' }),
          auth_failures: exposition.sum(UNLIMITED, { limit: 'auth_failures' }),
        };
      }),
    );

  beforeAll(async () => {
    redis = await startPrivateRedis();
    database = await createTestDatabase();
    const { store, migrator } = await openStore({ kind: 'postgres', url: database.url });
    try {
      await migrator.migrateToLatest();
      keyA = (await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'a' })).secret;
      const other = await store.createOrganization('other');
      keyB = (await store.createAdminKey({ organizationId: other.id, name: 'b' })).secret;
    } finally {
      await store.close();
    }
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
      RATE_LIMIT_BURST: String(PER_MINUTE),
      AUTH_FAILURE_LIMIT_PER_MINUTE: String(AUTH_FAILURES_PER_MINUTE),
      METRICS_PORT: '0',
    };
    replicas.push(...(await Promise.all([startServerProcess({ env }), startServerProcess({ env })])));
    for (const server of replicas) {
      metricsUrls.push(String((await server.waitForLine((line) => line.msg === 'metrics listening')).url));
    }
  });

  afterAll(async () => {
    await Promise.all(replicas.map((server) => server.kill()));
    await redis?.stop();
    await database?.drop();
  });

  it("enforce one admin key's budget together: what one replica counts, the other sees", async () => {
    const remaining: (string | null)[] = [];
    for (let i = 0; i < PER_MINUTE; i++) {
      const reply = await list(replica(i), keyA);
      expect(reply.response.status, reply.text).toBe(200);
      remaining.push(reply.response.headers.get('ratelimit-remaining'));
    }
    const over = await Promise.all([list(replica(0), keyA), list(replica(1), keyA)]);

    expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
    expect(over.map((reply) => reply.response.status)).toEqual([429, 429]);
    expect(over.every((reply) => Number(reply.response.headers.get('retry-after')) >= 1)).toBe(true);
  });

  it('count failed authentications of an address on both replicas together', async () => {
    const statuses = [];
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE + 2; i++) {
      statuses.push((await list(replica(i), GUESS)).response.status);
    }

    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
  });

  it("leave another organization's budget whole", async () => {
    const reply = await list(replica(1), keyB);

    expect(reply.response.status).toBe(200);
    expect(reply.response.headers.get('ratelimit-remaining')).toBe(String(PER_MINUTE - 1));
  });

  it('serve every request while Redis is down: each replica counts them and warns once, then limits again', async () => {
    const before = await unlimitedCounts();
    await redis.stop();
    // Both replicas hear of it from their Redis connection before any request: a warning of its own, which must not
    // stand in for the one about requests let through.
    await Promise.all(replicas.map((server) => server.waitForLine(isConnectionWarning, 10_000)));
    expect(replicas.map((server) => server.lines.filter(isUnlimitedWarning).length)).toEqual([0, 0]);

    const logged = replicas.map(requestLines);
    const perReplica = (server: StartedServerProcess) =>
      Promise.all([
        ...Array.from({ length: REQUESTS_WHILE_DOWN }, () => list(server, keyA)),
        ...Array.from({ length: FAILURES_WHILE_DOWN }, () => list(server, GUESS)),
      ]);
    const replies = await Promise.all(replicas.map(perReplica));
    await Promise.all(
      replicas.map((server, i) =>
        waitForRequestLines(server, (logged[i] ?? 0) + REQUESTS_WHILE_DOWN + FAILURES_WHILE_DOWN),
      ),
    );
    const after = await unlimitedCounts();

    for (const [i, server] of replicas.entries()) {
      const served = replies[i] ?? [];
      expect(served.slice(0, REQUESTS_WHILE_DOWN).map((reply) => reply.response.status)).toEqual(
        Array(REQUESTS_WHILE_DOWN).fill(200),
      );
      expect(
        served.slice(0, REQUESTS_WHILE_DOWN).every((reply) => !reply.response.headers.has('ratelimit-limit')),
      ).toBe(true);
      expect(served.slice(REQUESTS_WHILE_DOWN).map((reply) => reply.response.status)).toEqual(
        Array(FAILURES_WHILE_DOWN).fill(401),
      );
      const warnings = server.lines.filter(isUnlimitedWarning);
      expect(warnings, `replica ${i}`).toHaveLength(1);
      expect(warnings[0]?.level).toBe(40);
      expect(after[i]?.admin_key).toBe((before[i]?.admin_key ?? 0) + REQUESTS_WHILE_DOWN);
      expect(after[i]?.auth_failures).toBe((before[i]?.auth_failures ?? 0) + FAILURES_WHILE_DOWN);
      expect(server.lines.some((line) => Number(line.status) >= 500)).toBe(false);
    }

    await redis.start();
    // ioredis reconnects by itself, after a back-off of at most two seconds.
    let limitedAgain = false;
    for (let attempt = 0; attempt < 100 && !limitedAgain; attempt++) {
      const probes = await Promise.all([list(replica(0), keyB), list(replica(1), keyB)]);
      limitedAgain = probes.every((reply) => reply.response.headers.get('ratelimit-limit') === String(PER_MINUTE));
      if (!limitedAgain) {
        await sleep(100);
      }
    }
    expect(limitedAgain).toBe(true);
    await Promise.all(replicas.map((server) => server.waitForLine(isBackLine, 5000)));
    for (const server of replicas) {
      expect(server.child.exitCode).toBeNull();
    }
  });

  it('answer promptly while Redis is frozen: the limiter gives up after half a second and lets requests through', async () => {
    const before = await unlimitedCounts();
    redis.freeze();
    try {
      const started = performance.now();
      const replies = await Promise.all([list(replica(0), keyB), list(replica(1), keyB)]);
      const elapsedMs = performance.now() - started;

      expect(replies.map((reply) => reply.response.status)).toEqual([200, 200]);
      expect(elapsedMs).toBeLessThan(3000);
      expect((await unlimitedCounts()).map((counts) => counts.admin_key)).toEqual(
        before.map((counts) => counts.admin_key + 1),
      );
    } finally {
      redis.thaw();
    }
  });
});
