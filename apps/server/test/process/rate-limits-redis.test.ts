import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_ORGANIZATION, openStore } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEYS_PATH,
  authHeaders,
  createTestDatabase,
  fetchText,
  type PrivateRedis,
  postgresAvailable,
  type StartedServerProcess,
  startPrivateRedis,
  startServerProcess,
  type TestDatabase,
} from '../../testing/index.js';

const PER_MINUTE = 10;
const AUTH_FAILURES_PER_MINUTE = 4;
const GUESS = 'sk-adm-guessguessguessguessguessguessguessgue';

describe.runIf(await postgresAvailable())('rate limits shared by two replicas through Redis', () => {
  let redis: PrivateRedis;
  let database: TestDatabase;
  const replicas: StartedServerProcess[] = [];
  let keyA = '';
  let keyB = '';

  const list = (replica: StartedServerProcess, adminKey: string) =>
    fetchText(`${replica.baseUrl}${API_KEYS_PATH}?limit=1`, { headers: authHeaders(adminKey) });
  const replica = (i: number) => replicas[i % 2] as StartedServerProcess;

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
    };
    replicas.push(...(await Promise.all([startServerProcess({ env }), startServerProcess({ env })])));
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

  it('answer promptly while Redis is frozen: the limiter gives up after half a second and lets requests through', async () => {
    redis.freeze();
    try {
      const started = performance.now();
      const replies = await Promise.all([list(replica(0), keyB), list(replica(1), keyB)]);
      const elapsedMs = performance.now() - started;

      expect(replies.map((reply) => reply.response.status)).toEqual([200, 200]);
      expect(elapsedMs).toBeLessThan(3000);
    } finally {
      redis.thaw();
    }
  });

  it('serve every request when Redis stops (fail open, one warning a minute), and limit again once it is back', async () => {
    await redis.stop();
    const during = [];
    for (let i = 0; i < 3 * PER_MINUTE; i++) {
      during.push(await list(replica(i), keyA));
    }

    expect(during.map((reply) => reply.response.status)).toEqual(Array(3 * PER_MINUTE).fill(200));
    expect(during.every((reply) => reply.response.headers.get('ratelimit-limit') === null)).toBe(true);
    const isWarning = (line: { msg?: string }) => String(line.msg).startsWith('rate limiter unavailable');
    for (const server of replicas) {
      // The log is written in buffers at least every 200 ms: wait for the line, then for one more flush.
      await server.waitForLine(isWarning, 5000);
      await sleep(400);
      const warnings = server.lines.filter(isWarning);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe(40);
      expect(server.lines.some((line) => Number(line.status) >= 500)).toBe(false);
    }

    await redis.start();
    // ioredis reconnects by itself, after a back-off of at most two seconds.
    let limitedAgain = false;
    for (let attempt = 0; attempt < 100 && !limitedAgain; attempt++) {
      const replies = await Promise.all([list(replica(0), keyB), list(replica(1), keyB)]);
      limitedAgain = replies.every((reply) => reply.response.headers.get('ratelimit-limit') === String(PER_MINUTE));
      if (!limitedAgain) {
        await sleep(100);
      }
    }
    expect(limitedAgain).toBe(true);
    for (const server of replicas) {
      expect(server.child.exitCode).toBeNull();
    }
  });
});
