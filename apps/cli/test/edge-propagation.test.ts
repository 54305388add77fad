import { CHANGE_FEED, LATEST_API_VERSION } from '@apikeys/api-types';
import { createVerifierClient, type VerifierClient } from '@apikeys/client';
import {
  createTestDatabase,
  postgresAvailable,
  type StartedServerProcess,
  startServerProcess,
  type TestDatabase,
} from '@apikeys/server/testing';
import { microsToRfc3339, nowMicros, openStore, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliJson } from './run-cli.js';

// A gateway that answers verifications from its memory (the client's caching verifier), subscribed to replica B of
// two server replicas on one PostgreSQL database, while keys change through replica A: its API, and the operator
// CLI's API commands. The test lives here because this package alone has the client, the server's test support and
// the CLI without a cycle between packages. In CI `postgresAvailable` throws when PostgreSQL is unreachable: never
// skipped there.
const available = await postgresAvailable();

/** The most a change may take to reach the gateway's answers. */
const PROPAGATION_LIMIT_MS = 1_000;
/** When a frozen feed must have been noticed: the silence the client waits for, and timers' slack. */
const SILENCE_BOUND_MS = 2.5 * CHANGE_FEED.heartbeatIntervalMs + 500;

type Code = 'VALID' | 'INACTIVE' | 'ARCHIVED' | 'EXPIRED' | 'NOT_FOUND';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(available)('a caching gateway on replica B, keys changed through replica A', () => {
  let database: TestDatabase;
  let store: Store;
  let replicaA: StartedServerProcess;
  let replicaB: StartedServerProcess;
  let adminKey: string;
  let verifierSecret: string;
  let gateway: VerifierClient;
  const delays: Record<string, number[]> = {};

  beforeAll(async () => {
    database = await createTestDatabase();
    replicaA = await startServerProcess({ env: { DATABASE_URL: database.url } });
    replicaB = await startServerProcess({ env: { DATABASE_URL: database.url } });
    store = (await openStore({ kind: 'postgres', url: database.url })).store;
    const organization = await store.createOrganization('edge');
    ({ secret: adminKey } = await store.createAdminKey({ organizationId: organization.id, name: 'admin' }));
    ({ secret: verifierSecret } = await store.createVerifierKey({ organizationId: organization.id, name: 'gateway' }));
    gateway = createVerifierClient({
      baseUrl: replicaB.baseUrl,
      apiKey: verifierSecret,
      cache: true,
      maxRetries: 0,
      timeoutMs: 1_000,
    });
    await until(() => gateway.cache?.live === true, 10_000, 'the gateway subscribed');
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([replicaA?.stop(), replicaB?.stop()]);
    await store?.close();
    await database?.drop();
    const summary = (name: string, values: number[]) =>
      `${name}: ${values.length} trials, median ${median(values).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;
    const lines = [...Object.entries(delays).map(([kind, values]) => summary(kind, values))];
    lines.push(summary('all', Object.values(delays).flat()));
    process.stdout.write(`propagation to a caching gateway on B:\n${lines.join('\n')}\n`);
  });

  async function until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const started = performance.now();
    while (!ready()) {
      if (performance.now() - started > timeoutMs) {
        throw new Error(`${what}: not within ${timeoutMs} ms`);
      }
      await sleep(10);
    }
  }

  async function callA(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${replicaA.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': adminKey, 'vendor-version': LATEST_API_VERSION, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(answer)).toBe(200);
    return answer;
  }

  /**
   * A new key through A, verified by the gateway (from the server) until it answers from its memory. An answer that
   * was on its way when an event came (the previous trial's, late) is not remembered: the next one is.
   */
  async function rememberedKey(name: string): Promise<{ id: string; secret: string }> {
    const { id, key } = (await callA('POST', '/v1/organizations/api_keys', { name })) as { id: string; key: string };
    for (let attempt = 0; attempt < 3; attempt++) {
      const hits = gateway.cache?.hits ?? 0;
      expect((await gateway.keys.verify(key)).code).toBe('VALID');
      if (gateway.cache?.hits === hits + 1) {
        return { id, secret: key };
      }
    }
    throw new Error(`the gateway did not answer ${name} from its memory after three verifications`);
  }

  /** Milliseconds from now until the gateway answers `code` for `secret`; throws past a few seconds. */
  async function untilGatewayAnswers(secret: string, code: Code): Promise<number> {
    const since = performance.now();
    for (;;) {
      const verdict = await gateway.keys.verify(secret);
      const elapsed = performance.now() - since;
      if (verdict.code === code) {
        return elapsed;
      }
      if (elapsed > 5_000) {
        throw new Error(`the gateway still answers ${verdict.code} after ${elapsed.toFixed(0)} ms, not ${code}`);
      }
      await nextTurn();
    }
  }

  /** Runs `trials` trials of one kind of change, each timed from the end of the change to the gateway's new verdict. */
  async function measure(kind: string, trials: number, change: (id: string) => Promise<void>, code: Code) {
    delays[kind] = [];
    for (let trial = 0; trial < trials; trial++) {
      const { id, secret } = await rememberedKey(`${kind} ${trial}`);
      await change(id);
      delays[kind].push(await untilGatewayAnswers(secret, code));
    }
    expect(Math.max(...delays[kind])).toBeLessThanOrEqual(PROPAGATION_LIMIT_MS);
  }

  it('reflects a deactivation through A within a second, in every trial', async () => {
    await measure(
      'deactivate',
      15,
      async (id) => void (await callA('POST', `/v1/organizations/api_keys/${id}`, { status: 'inactive' })),
      'INACTIVE',
    );
  });

  it('reflects an archive through A within a second, in every trial', async () => {
    await measure(
      'archive',
      10,
      async (id) => void (await callA('POST', `/v1/organizations/api_keys/${id}`, { status: 'archived' })),
      'ARCHIVED',
    );
  });

  it('reflects a rotation through A (no grace period) within a second: the old key expires, the new one is valid', async () => {
    const replacements: string[] = [];
    await measure(
      'rotate',
      10,
      async (id) => {
        const rotated = await callA('POST', `/v1/organizations/api_keys/${id}/rotate`, { grace_period_seconds: 0 });
        replacements.push(rotated.key as string);
      },
      'EXPIRED',
    );
    for (const secret of replacements) {
      expect((await gateway.keys.verify(secret)).code).toBe('VALID');
    }
  });

  it('answers EXPIRED within a second of an expiry set through A, by the clock, with no change to hear', async () => {
    delays.expire = [];
    for (let trial = 0; trial < 10; trial++) {
      const { id, secret } = await rememberedKey(`expire ${trial}`);
      const expiresAt = nowMicros() + 1_000_000;
      await callA('POST', `/v1/organizations/api_keys/${id}`, { expires_at: microsToRfc3339(expiresAt) });
      expect(await untilGatewayAnswers(secret, 'VALID')).toBeLessThan(PROPAGATION_LIMIT_MS);
      await sleep(Math.max(0, (expiresAt - nowMicros()) / 1000));
      delays.expire.push(await untilGatewayAnswers(secret, 'EXPIRED'));
    }
    expect(Math.max(...delays.expire)).toBeLessThanOrEqual(PROPAGATION_LIMIT_MS);
  });

  it("reflects the operator CLI's deactivations and rotations (its API commands, through A) within a second", async () => {
    const env = { APIKEYS_BASE_URL: replicaA.baseUrl, APIKEYS_ADMIN_KEY: adminKey };
    await measure(
      'cli deactivate',
      6,
      (id) => runCliJson(['keys', 'update', id, '--status', 'inactive', '--json'], env),
      'INACTIVE',
    );
    await measure('cli rotate', 4, (id) => runCliJson(['keys', 'rotate', id, '--json'], env), 'EXPIRED');
  });

  it('stops answering from memory within the heartbeat bound when B freezes, never says VALID for a key revoked meanwhile, and resubscribes once B thaws', async () => {
    const { id, secret } = await rememberedKey('revoked while B is frozen');
    process.kill(replicaB.pid, 'SIGSTOP');
    const frozenAt = performance.now();
    try {
      await callA('POST', `/v1/organizations/api_keys/${id}`, { status: 'inactive' });
      // Each answer at the moment its call began: a call to the frozen B waits for the client's timeout.
      const answers: { at: number; code: string }[] = [];
      while (performance.now() - frozenAt < SILENCE_BOUND_MS + 2_000) {
        const at = performance.now() - frozenAt;
        const code = await gateway.keys.verify(secret).then(
          (verdict) => verdict.code,
          (error: Error) => error.name,
        );
        answers.push({ at, code });
        await sleep(20);
      }
      const offAt = answers.find((answer) => answer.code !== 'VALID')?.at ?? Number.POSITIVE_INFINITY;

      expect(gateway.cache?.live).toBe(false);
      expect(offAt).toBeLessThanOrEqual(SILENCE_BOUND_MS);
      expect(answers.filter((answer) => answer.at > SILENCE_BOUND_MS && answer.code === 'VALID')).toEqual([]);
    } finally {
      process.kill(replicaB.pid, 'SIGCONT');
    }
    await until(() => gateway.cache?.live === true, 10_000, 'the gateway resubscribed after B thawed');
    expect(await untilGatewayAnswers(secret, 'INACTIVE')).toBeLessThan(PROPAGATION_LIMIT_MS);
  });

  it('resubscribes by itself when B is stopped and started again on its port', async () => {
    await until(() => gateway.cache?.live === true, 10_000, 'the gateway subscribed');
    const { id, secret } = await rememberedKey('revoked while B is down');
    const port = new URL(replicaB.baseUrl).port;
    await replicaB.stop();
    await until(() => gateway.cache?.live === false, SILENCE_BOUND_MS, 'the gateway noticed B stopped');
    await callA('POST', `/v1/organizations/api_keys/${id}`, { status: 'inactive' });
    await expect(gateway.keys.verify(secret)).rejects.toThrow();

    replicaB = await startServerProcess({ env: { DATABASE_URL: database.url, PORT: port } });
    await until(() => gateway.cache?.live === true, 10_000, 'the gateway resubscribed to the new B');

    expect((await gateway.keys.verify(secret)).code).toBe('INACTIVE');
    const { secret: fresh } = await rememberedKey('after the restart');
    expect((await gateway.keys.verify(fresh)).code).toBe('VALID');
  });
});
