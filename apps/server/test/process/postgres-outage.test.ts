import { setTimeout as sleep } from 'node:timers/promises';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  DEFAULT_ORGANIZATION,
  fetchText,
  type LogLine,
  onPostgres,
  type PrivatePostgres,
  privatePostgresAvailable,
  type StartedServerProcess,
  startPrivatePostgres,
  startServerProcess,
  UNAVAILABLE_MESSAGES,
} from '@apikeys/server/testing';
import { type OpenedStore, openStore, type WriteOutcome } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const ORGANIZATION = DEFAULT_ORGANIZATION.id;
/** The server's database deadline: short, so that outages are quick to test. */
const TIMEOUT_MS = 1000;
/** What a request may take beyond the deadline on this loaded 2-core machine: HTTP, logging, scheduling. */
const MARGIN_MS = 750;
const POOL_SIZE = 4;
/** The server's connections carry this name, so that the test can count and terminate them. */
const SERVER_APPLICATION = 'outage_test_server';
/** A request still unanswered after this long counts as hung. */
const HUNG_MS = 15_000;

/** One answered request. */
interface Reply {
  method: 'GET' | 'POST';
  status: number;
  body: unknown;
  requestId: string | null;
  retryAfter: string | null;
  ms: number;
}

const msOf = (reply: Reply) => reply.ms;

/** Figures for the report, printed only when asked for (`DEADLINE_FIGURES=1`). */
function report(what: string, figures: number | number[]): void {
  if (process.env.DEADLINE_FIGURES) {
    const values = (Array.isArray(figures) ? figures : [figures]).map((value) => Math.round(value));
    process.stderr.write(`[server outage] ${what}: ${values.join(', ')}\n`);
  }
}

describe.runIf(privatePostgresAvailable())(
  'the server on a PostgreSQL that stops, freezes and drops connections',
  () => {
    let cluster: PrivatePostgres | undefined;
    let opened: OpenedStore | undefined;
    let server: StartedServerProcess | undefined;
    let adminKey = '';
    let keyIds: string[] = [];

    const theCluster = () => cluster as PrivatePostgres;
    const theServer = () => server as StartedServerProcess;
    const theStore = () => (opened as OpenedStore).store;

    async function send(method: 'GET' | 'POST', path: string, body?: object): Promise<Reply> {
      const started = performance.now();
      const { response, body: parsed } = await fetchText(`${theServer().baseUrl}${path}`, {
        method,
        headers: authHeaders(adminKey, body ? { 'content-type': 'application/json' } : {}),
        ...(body && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(HUNG_MS),
      });
      return {
        method,
        status: response.status,
        body: parsed,
        requestId: response.headers.get('request-id'),
        retryAfter: response.headers.get('retry-after'),
        ms: performance.now() - started,
      };
    }
    const list = () => send('GET', `${API_KEYS_PATH}?limit=5`);
    const get = (id: string) => send('GET', apiKeyPath(id));
    const update = (id: string, name: string) => send('POST', apiKeyPath(id), { name });
    /** A list, a get and an update at once. */
    const oneOfEach = (n: number) =>
      Promise.all([list(), get(keyIds[n % keyIds.length] as string), update(keyIds[0] as string, `outage ${n}`)]);

    /**
     * Checks a 503 against the contract: error shape, retry-after, and the warning the server logged, with one of
     * `reasons`; for an update, a message and `write_outcome` that say what became of it, one of `writeOutcomes`.
     * Returns the warning.
     */
    async function expectUnavailable(
      reply: Reply,
      reasons: readonly string[],
      writeOutcomes: readonly WriteOutcome[] = ['not_made', 'unknown'],
    ): Promise<LogLine> {
      const context = JSON.stringify(reply);
      expect(reply.status, context).toBe(503);
      expect(reply.retryAfter, context).toMatch(/^[1-9][0-9]*$/);
      const warning = await theServer().waitForLine(
        (line) => line.request_id === reply.requestId && line.msg === 'database unavailable',
        2000,
      );
      expect(warning.level, context).toBe(40);
      expect(reasons, context).toContain(warning.reason);
      if (reply.method === 'POST') {
        expect(writeOutcomes, context).toContain(warning.write_outcome);
      } else {
        expect(warning.write_outcome, context).toBeUndefined();
      }
      const message = UNAVAILABLE_MESSAGES[reply.method === 'POST' ? (warning.write_outcome as WriteOutcome) : 'read'];
      expect(reply.body, context).toEqual({
        type: 'error',
        error: { type: 'service_unavailable_error', message },
        request_id: reply.requestId,
      });
      return warning;
    }

    /**
     * Checks that an update refused by a frozen database says its outcome is unknown only when a statement was sent
     * and not answered, and that it was not made when no connection was had in time. (A statement sent and not
     * answered may also be the read that authenticates the update: that one changed nothing.)
     */
    function expectOutcomeOfDelivery(reply: Reply, warning: LogLine): void {
      const context = JSON.stringify(warning);
      if (reply.method !== 'POST') {
        return;
      }
      if (warning.write_outcome === 'unknown') {
        expect(warning.detail, context).toMatch(/did not answer within/);
      }
      if (/no connection to the database within/.test(String(warning.detail))) {
        expect(warning.write_outcome, context).toBe('not_made');
      }
    }

    /** Sends a list, a get and an update until all three answer 200; resolves with the time that took. */
    async function timeToRecover(limitMs: number): Promise<number> {
      const started = performance.now();
      for (let n = 0; performance.now() - started < limitMs; n++) {
        const replies = await oneOfEach(n);
        if (replies.every((reply) => reply.status === 200)) {
          return performance.now() - started;
        }
        expect(replies.map((reply) => reply.status).filter((status) => status !== 503)).toEqual([]);
        await sleep(50);
      }
      throw new Error(`the server did not recover within ${limitMs} ms`);
    }

    /** The server's connections as PostgreSQL sees them. */
    const serverBackends = () =>
      onPostgres(theCluster().url, async (client) => {
        const { rows } = await client.query<{ pid: number; state: string }>(
          'select pid, state from pg_stat_activity where application_name = $1',
          [SERVER_APPLICATION],
        );
        return rows;
      });

    beforeAll(async () => {
      cluster = await startPrivatePostgres();
      server = await startServerProcess({
        env: {
          DATABASE_URL: `${cluster.url}?application_name=${SERVER_APPLICATION}`,
          DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
          DATABASE_POOL_SIZE: String(POOL_SIZE),
          RATE_LIMIT_PER_MINUTE: '0',
        },
      });
      // The server has migrated the database; the test's own store adds the data.
      opened = await openStore({ kind: 'postgres', url: cluster.url }, { poolSize: 2 });
      adminKey = (await theStore().createAdminKey({ organizationId: ORGANIZATION, name: 'outage admin' })).secret;
      await seedApiKeys(theStore(), { organizationId: ORGANIZATION, count: 30, workspaces: 2, users: 2, seed: 6 });
      const page = await theStore().listApiKeys({ organizationId: ORGANIZATION, limit: 30 });
      keyIds = page.kind === 'page' ? page.keys.map((key) => key.id) : [];
    });

    // Whatever a test did to the cluster, the next one finds it thawed; the teardown never leaves it frozen.
    afterEach(async () => {
      await cluster?.thaw();
    });

    afterAll(async () => {
      await cluster?.thaw();
      await server?.kill();
      await opened?.store.close();
      await cluster?.remove();
    });

    it('answers 503 at once while PostgreSQL is stopped, and 200 within seconds of its restart', async () => {
      expect((await oneOfEach(0)).map((reply) => reply.status)).toEqual([200, 200, 200]);

      await theCluster().stop();
      const replies = [...(await oneOfEach(1)), ...(await oneOfEach(2))];
      await theCluster().start();
      const recoveryMs = await timeToRecover(5000);

      report('stopped: time to 503 (ms)', replies.map(msOf));
      report('stopped: time to recover after restart (ms)', recoveryMs);
      for (const reply of replies) {
        // The connection was refused: the update was not made.
        await expectUnavailable(reply, ['unreachable', 'busy'], ['not_made']);
        expect(reply.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
      }
      expect(recoveryMs).toBeLessThan(5000);
      expect(theServer().exitReason()).toBeUndefined();
    });

    it('answers 503 within the deadline while PostgreSQL is frozen, and 200 within seconds of the thaw', async () => {
      expect((await oneOfEach(3)).map((reply) => reply.status)).toEqual([200, 200, 200]);

      await theCluster().freeze();
      // Rounds one after another, then a burst that needs more connections than the pool has.
      const replies: Reply[] = [];
      for (let round = 0; round < 2; round++) {
        replies.push(...(await oneOfEach(round)));
      }
      replies.push(...(await Promise.all(Array.from({ length: 8 }, (_, n) => oneOfEach(n)))).flat());
      await theCluster().thaw();
      const recoveryMs = await timeToRecover(5000);

      report('frozen: time to 503 (ms)', replies.map(msOf));
      report('frozen: time to recover after thaw (ms)', recoveryMs);
      const outcomes: unknown[] = [];
      for (const reply of replies) {
        const warning = await expectUnavailable(reply, ['timeout']);
        expectOutcomeOfDelivery(reply, warning);
        outcomes.push(warning.write_outcome);
        expect(reply.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
        expect(reply.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
      }
      expect(recoveryMs).toBeLessThan(3000);
      // The updates after the first round found no connection that could answer: not made.
      expect(outcomes).toContain('not_made');
      expect(theServer().exitReason()).toBeUndefined();
    });

    /**
     * Updates keys one after another, one key per worker, while `disrupt` runs; then checks that each key holds its
     * last acknowledged name or a later one (an update answered 503 may or may not have committed), never an older one.
     */
    async function updateWhile(
      disrupt: () => Promise<void>,
      workers: number,
    ): Promise<{ replies: Reply[]; warnings: LogLine[] }> {
      const keys = keyIds.slice(5, 5 + workers);
      const acknowledged = keys.map(() => -1);
      const sent = keys.map(() => -1);
      const replies: Reply[] = [];
      let updating = true;
      const worker = async (index: number) => {
        for (let n = 0; updating; n++) {
          sent[index] = n;
          const reply = await update(keys[index] as string, `worker ${index} update ${n}`);
          replies.push(reply);
          if (reply.status === 200) {
            acknowledged[index] = n;
          }
        }
      };
      const running = keys.map((_, index) => worker(index));
      try {
        await disrupt();
      } finally {
        updating = false;
        await Promise.all(running);
      }

      const stored = await Promise.all(keys.map((id) => theStore().getApiKey(ORGANIZATION, id)));
      const storedNumbers = stored.map((key) => Number(/update (\d+)$/.exec(key?.name ?? '')?.[1] ?? -1));
      keys.forEach((_, index) => {
        const context = `key of worker ${index}: stored ${stored[index]?.name}`;
        expect(storedNumbers[index], context).toBeGreaterThanOrEqual(acknowledged[index] as number);
        expect(storedNumbers[index], context).toBeLessThanOrEqual(sent[index] as number);
      });
      const warnings: LogLine[] = [];
      for (const reply of replies.filter((reply) => reply.status !== 200)) {
        warnings.push(await expectUnavailable(reply, ['unreachable', 'busy', 'timeout']));
      }
      return { replies, warnings };
    }

    it('loses no acknowledged update while the server connections are terminated under updates in flight', async () => {
      let terminated = 0;
      const { replies } = await updateWhile(async () => {
        for (let round = 0; round < 10; round++) {
          await sleep(200);
          terminated += await onPostgres(theCluster().url, async (client) => {
            const { rowCount } = await client.query(
              'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
              [SERVER_APPLICATION],
            );
            return rowCount ?? 0;
          });
        }
        await sleep(300);
      }, 8);
      const answered = (status: number) => replies.filter((reply) => reply.status === status).length;

      report('terminated: connections terminated, updates answered 200, updates answered 503', [
        terminated,
        answered(200),
        answered(503),
      ]);
      expect(terminated).toBeGreaterThan(0);
      expect(answered(200) + answered(503)).toBe(replies.length);
      expect(answered(200)).toBeGreaterThan(20);
      expect(answered(503)).toBeGreaterThan(0);
      expect(theServer().exitReason()).toBeUndefined();
    });

    it('loses no acknowledged update when PostgreSQL freezes under updates in flight', async () => {
      const { replies, warnings } = await updateWhile(async () => {
        await sleep(300);
        await theCluster().freeze();
        await sleep(TIMEOUT_MS * 1.5);
        await theCluster().thaw();
        await sleep(1000);
      }, 8);
      const answered = (status: number) => replies.filter((reply) => reply.status === status).length;

      const unknown = warnings.filter((warning) => warning.write_outcome === 'unknown').length;

      report('frozen under updates: answered 200, answered 503, of which outcome unknown', [
        answered(200),
        answered(503),
        unknown,
      ]);
      expect(answered(200) + answered(503)).toBe(replies.length);
      expect(answered(503)).toBeGreaterThanOrEqual(8);
      // The updates in flight when PostgreSQL froze had been sent: their outcome is unknown.
      expect(unknown).toBeGreaterThan(0);
      for (const [index, warning] of warnings.entries()) {
        expectOutcomeOfDelivery(replies.filter((reply) => reply.status !== 200)[index] as Reply, warning);
      }
      expect(replies.every((reply) => reply.ms < TIMEOUT_MS + MARGIN_MS)).toBe(true);
      expect(theServer().exitReason()).toBeUndefined();
    });

    it('keeps within its pool, never answered 500 or logged an error, and stops gracefully', async () => {
      await Promise.all(Array.from({ length: 10 }, (_, n) => oneOfEach(n)));
      let backends = await serverBackends();
      // Backends of connections the server gave up on while PostgreSQL was frozen exit once they run again.
      for (let attempt = 0; attempt < 50 && backends.length > POOL_SIZE * 2; attempt++) {
        await sleep(100);
        backends = await serverBackends();
      }
      const exit = await theServer().stop();
      const lines = theServer().lines;

      report('server connections after the outages', backends.length);
      // The request pipeline, and the migration pool until its idle connections close.
      expect(backends.length).toBeLessThanOrEqual(POOL_SIZE * 2);
      expect(backends.filter((backend) => backend.state !== 'idle')).toEqual([]);
      expect(exit, theServer().stderr()).toEqual({ code: 0, signal: null });
      expect(
        lines.filter((line) => Number(line.level) >= 50 || (Number(line.status) >= 500 && Number(line.status) !== 503)),
      ).toEqual([]);
      expect(lines.filter((line) => line.msg === 'database unavailable').length).toBeGreaterThan(0);
    });
  },
);
