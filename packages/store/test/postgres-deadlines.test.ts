import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/open-store.js';
import { DeadlineError } from '../src/postgres/client-errors.js';
import { seedApiKeys } from '../src/seeding/index.js';
import type { OpenedStore, Store } from '../src/types.js';
import { DatabaseUnavailableError, type UnavailableReason, type WriteOutcome } from '../src/unavailable.js';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from '../testing/private-postgres.js';

// In CI this throws when the PostgreSQL binaries are absent, so these tests are never skipped there.
const available = privatePostgresAvailable();

const TIMEOUT_MS = 1000;
/** What a call may take beyond its deadline on this loaded 2-core machine: timers, event loop, scheduling. */
const MARGIN_MS = 500;
const POOL_SIZE = 3;
/** The store's connections carry this name, so that the test can count and terminate them. */
const APPLICATION_NAME = 'deadline_test_store';

/** How one call ended, and when. */
interface Outcome {
  label: string;
  ms: number;
  error?: unknown;
}

async function timed(label: string, call: () => Promise<unknown>): Promise<Outcome> {
  const started = performance.now();
  try {
    await call();
    return { label, ms: performance.now() - started };
  } catch (error) {
    return { label, ms: performance.now() - started, error };
  }
}

const msOf = (outcome: Outcome) => outcome.ms;

/** The reason of a DatabaseUnavailableError, or a description of whatever else the call ended with. */
function reasonOf(outcome: Outcome): UnavailableReason | string {
  if (outcome.error instanceof DatabaseUnavailableError) {
    return outcome.error.reason;
  }
  return outcome.error === undefined ? 'succeeded' : `not unavailable: ${String(outcome.error)}`;
}

/** What a failed write did, as its DatabaseUnavailableError says. */
function writeOutcomeOf(outcome: Outcome): WriteOutcome | string {
  return outcome.error instanceof DatabaseUnavailableError ? outcome.error.writeOutcome : reasonOf(outcome);
}

/** Figures for the report, printed only when asked for (`DEADLINE_FIGURES=1`). */
function report(what: string, figures: number | number[], unit = 'ms'): void {
  if (process.env.DEADLINE_FIGURES) {
    const values = (Array.isArray(figures) ? figures : [figures]).map((value) => Math.round(value));
    process.stderr.write(`[store deadlines] ${what}: ${values.join(', ')} ${unit}\n`);
  }
}

describe.runIf(available)('store deadlines on a private PostgreSQL cluster', () => {
  let cluster: PrivatePostgres | undefined;
  let opened: OpenedStore | undefined;
  let side: pg.Client | undefined;
  let organizationId = '';
  let keyIds: string[] = [];

  const theCluster = () => cluster as PrivatePostgres;
  const store = () => (opened as OpenedStore).store;
  const theSide = () => side as pg.Client;
  const storeUrl = () => `${theCluster().url}?application_name=${APPLICATION_NAME}`;

  /** One call of each kind: through the pipeline (requests' statements), and through the pool. */
  const everyKindOfCall = (target: Store = store()): [string, () => Promise<unknown>][] => [
    ['findCredential (pipeline)', () => target.findCredential('no such hash')],
    ['getApiKey (pipeline)', () => target.getApiKey(organizationId, keyIds[0] as string)],
    ['listApiKeys (pipeline)', () => target.listApiKeys({ organizationId, limit: 5 })],
    ['updateApiKey (pipeline)', () => target.updateApiKey(organizationId, keyIds[1] as string, { name: 'renamed' })],
    ['createOrganization (pool)', () => target.createOrganization('during an outage')],
    ['transaction (pool)', () => target.transaction((inner) => inner.getApiKey(organizationId, keyIds[2] as string))],
  ];
  const runAll = (target?: Store) => Promise.all(everyKindOfCall(target).map(([label, call]) => timed(label, call)));

  /** Runs every kind of call until all succeed; resolves with the time that took. */
  async function timeToRecover(limitMs: number): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < limitMs) {
      const outcomes = await runAll();
      if (outcomes.every((outcome) => outcome.error === undefined)) {
        return performance.now() - started;
      }
      await sleep(50);
    }
    throw new Error(`the store did not recover within ${limitMs} ms`);
  }

  /** The store's connections as PostgreSQL sees them. */
  async function storeBackends(): Promise<{ pid: number; state: string }[]> {
    const { rows } = await theSide().query<{ pid: number; state: string }>(
      'select pid, state from pg_stat_activity where application_name = $1 order by pid',
      [APPLICATION_NAME],
    );
    return rows;
  }

  async function connectSide(): Promise<void> {
    side = new pg.Client({ connectionString: theCluster().url, connectionTimeoutMillis: 5000 });
    side.on('error', () => {});
    await side.connect();
  }

  beforeAll(async () => {
    cluster = await startPrivatePostgres();
    opened = await openStore({ kind: 'postgres', url: storeUrl() }, { timeoutMs: TIMEOUT_MS, poolSize: POOL_SIZE });
    await opened.migrator.migrateToLatest();
    organizationId = (await store().createOrganization('deadlines')).id;
    await seedApiKeys(store(), { organizationId, count: 40, workspaces: 2, users: 2, seed: 5 });
    const page = await store().listApiKeys({ organizationId, limit: 40 });
    keyIds = page.kind === 'page' ? page.keys.map((key) => key.id) : [];
    await connectSide();
  });

  /** Whether the side connection still answers: a test may have stopped the cluster, or ended it. */
  async function sideAnswers(): Promise<boolean> {
    try {
      await theSide().query('select 1');
      return true;
    } catch {
      return false;
    }
  }

  // Whatever a test did to the cluster, the next one finds it running, and the teardown never leaves it frozen.
  afterEach(async () => {
    await cluster?.thaw();
    if (side && !(await sideAnswers())) {
      // pg_ctl refuses to start a cluster that is running: then only the side connection was down.
      await theCluster()
        .start()
        .catch(() => {});
      await connectSide();
    }
  });

  afterAll(async () => {
    await cluster?.thaw();
    await side?.end().catch(() => {});
    await opened?.store.close();
    await cluster?.remove();
  });

  it('stopped: every call fails at once (unreachable); all succeed within seconds of the restart', async () => {
    expect((await runAll()).map(reasonOf)).toEqual(everyKindOfCall().map(() => 'succeeded'));
    await side?.end();

    await theCluster().stop();
    // The first calls may meet connections the shutdown just terminated (57P01, busy); the next ones are refused.
    const first = await runAll();
    const second = await runAll();
    await theCluster().start();
    const recoveryMs = await timeToRecover(5000);
    await connectSide();

    report('stopped: time to fail', [...first, ...second].map(msOf));
    report('stopped: time to recover after restart', recoveryMs);
    for (const outcome of first) {
      expect(['unreachable', 'busy'], outcome.label).toContain(reasonOf(outcome));
      expect(outcome.ms, outcome.label).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    }
    for (const outcome of second) {
      expect(reasonOf(outcome), outcome.label).toBe('unreachable');
      expect(outcome.ms, outcome.label).toBeLessThan(MARGIN_MS);
      // The connection was refused: nothing was sent, so no write was made.
      expect(writeOutcomeOf(outcome), outcome.label).toBe('not_made');
    }
    expect(recoveryMs).toBeLessThan(2000);
  });

  it('restarted between calls: the first calls after the restart succeed, on new connections', async () => {
    expect((await runAll()).map(reasonOf)).toEqual(everyKindOfCall().map(() => 'succeeded'));
    const before = await storeBackends();
    await side?.end();

    await theCluster().stop();
    await theCluster().start();
    const outcomes = await runAll();
    await connectSide();
    const after = await storeBackends();

    expect(outcomes.map(reasonOf)).toEqual(everyKindOfCall().map(() => 'succeeded'));
    expect(before.length).toBeGreaterThan(0);
    expect(after.filter((backend) => before.some((old) => old.pid === backend.pid))).toEqual([]);
  });

  it('frozen: every call fails as a timeout within the deadline; all succeed at once after the thaw', async () => {
    expect((await runAll()).map(reasonOf)).toEqual(everyKindOfCall().map(() => 'succeeded'));

    await theCluster().freeze();
    // On the connections already open, then on new ones, which the frozen server accepts but never answers.
    const onOpenConnections = await runAll();
    const onNewConnections = await runAll();
    await theCluster().thaw();
    const recoveryMs = await timeToRecover(5000);

    report('frozen: time to fail', [...onOpenConnections, ...onNewConnections].map(msOf));
    report('frozen: time to recover after thaw', recoveryMs);
    for (const outcome of [...onOpenConnections, ...onNewConnections]) {
      expect(reasonOf(outcome), outcome.label).toBe('timeout');
      // The store's own deadline, told by its class, never by the driver's wording.
      expect((outcome.error as Error).cause, outcome.label).toBeInstanceOf(DeadlineError);
      expect(outcome.ms, outcome.label).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(outcome.ms, outcome.label).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    }
    // The update was sent on an open connection and got no answer: it may have committed. The transactions never
    // got an answer to their BEGIN, and nothing reached the new connections: not made.
    expect(Object.fromEntries(onOpenConnections.map((outcome) => [outcome.label, writeOutcomeOf(outcome)]))).toEqual({
      'findCredential (pipeline)': 'not_made',
      'getApiKey (pipeline)': 'not_made',
      'listApiKeys (pipeline)': 'not_made',
      'updateApiKey (pipeline)': 'unknown',
      'createOrganization (pool)': 'not_made',
      'transaction (pool)': 'not_made',
    });
    expect(onNewConnections.map(writeOutcomeOf)).toEqual(onNewConnections.map(() => 'not_made'));
    expect(recoveryMs).toBeLessThan(1000);
  });

  it('never hands a statement the answer of another after a pipelined connection was cut by the deadline', async () => {
    const ids = keyIds.slice(0, 20);
    await Promise.all(ids.map((id) => store().getApiKey(organizationId, id)));

    await theCluster().freeze();
    const cut = await Promise.all(ids.map((id) => timed(id, () => store().getApiKey(organizationId, id))));
    await theCluster().thaw();
    const keys = await Promise.all(ids.map((id) => store().getApiKey(organizationId, id)));
    const pages = await Promise.all(
      [1, 2, 3, 4, 5].map((limit) => store().listApiKeys({ organizationId, limit, filters: { status: 'active' } })),
    );

    expect(cut.map(reasonOf)).toEqual(ids.map(() => 'timeout'));
    expect(keys.map((key) => key?.id)).toEqual(ids);
    expect(pages.map((page) => (page.kind === 'page' ? page.keys.length : -1))).toEqual([1, 2, 3, 4, 5]);
  });

  it('a statement held up by a lock is cancelled by the server in time; its connection stays in use', async () => {
    const id = keyIds[3] as string;
    /** The store's backend that waits for the lock, once it does. */
    const waitingBackend = async (): Promise<number> => {
      for (let attempt = 0; attempt < 40; attempt++) {
        const { rows } = await theSide().query<{ pid: number }>(
          `select pid from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`,
          [APPLICATION_NAME],
        );
        if (rows[0]) {
          return rows[0].pid;
        }
        await sleep(20);
      }
      throw new Error('no statement of the store waits for the lock');
    };
    await theSide().query('begin');
    await theSide().query('select id from api_keys where id = $1 for update', [id]);
    try {
      const [update, pipelineBackend] = await Promise.all([
        timed('updateApiKey (pipeline)', () => store().updateApiKey(organizationId, id, { name: 'locked' })),
        waitingBackend(),
      ]);
      const [inTransaction, poolBackend] = await Promise.all([
        timed('updateApiKey in a transaction (pool)', () =>
          store().transaction((inner) => inner.updateApiKey(organizationId, id, { name: 'locked too' })),
        ),
        waitingBackend(),
      ]);
      await theSide().query('rollback');
      const after = await storeBackends();
      const renamed = await store().updateApiKey(organizationId, id, { name: 'unlocked' });

      report('lock wait: time to fail', [update.ms, inTransaction.ms]);
      for (const outcome of [update, inTransaction]) {
        expect(reasonOf(outcome), outcome.label).toBe('timeout');
        expect((outcome.error as Error).cause, outcome.label).toMatchObject({ code: '57014' });
        // PostgreSQL cancelled the statement, rolling it back: not made.
        expect(writeOutcomeOf(outcome), outcome.label).toBe('not_made');
        expect(outcome.ms, outcome.label).toBeGreaterThanOrEqual(TIMEOUT_MS - 150);
        expect(outcome.ms, outcome.label).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
      }
      // Both connections survived their statement's cancellation, and the pool's transaction was rolled back.
      expect(after).toEqual(
        expect.arrayContaining([
          { pid: pipelineBackend, state: 'idle' },
          { pid: poolBackend, state: 'idle' },
        ]),
      );
      expect(renamed?.name).toBe('unlocked');
    } finally {
      await theSide().query('rollback');
    }
  });

  it('migrations and seeding wait out a lock longer than the deadline, where requests give up', async () => {
    const holdMs = TIMEOUT_MS * 2.5;
    await theSide().query('begin');
    // What another replica's migration holds, and a lock that keeps every writer of api_keys waiting.
    await theSide().query('lock table kysely_migration, kysely_migration_lock in access exclusive mode');
    await theSide().query('lock table api_keys in share mode');
    const released = sleep(holdMs).then(() => theSide().query('commit'));
    try {
      const [migration, seeding, update] = await Promise.all([
        timed('migrateToLatest', () => (opened as OpenedStore).migrator.migrateToLatest()),
        timed('seedApiKeys', () =>
          seedApiKeys(store(), { organizationId, count: 10, workspaces: 1, users: 1, seed: 9 }),
        ),
        timed('updateApiKey', () => store().updateApiKey(organizationId, keyIds[4] as string, { name: 'waits' })),
      ]);

      for (const outcome of [migration, seeding]) {
        expect(reasonOf(outcome), outcome.label).toBe('succeeded');
        expect(outcome.ms, outcome.label).toBeGreaterThanOrEqual(holdMs - 100);
      }
      expect(reasonOf(update)).toBe('timeout');
      expect(update.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    } finally {
      await released;
    }
  });

  it('a connection terminated inside a transaction fails the call as unavailable, without a crash', async () => {
    const outcome = await timed('transaction', () =>
      store().transaction(async (inner) => {
        await inner.getApiKey(organizationId, keyIds[5] as string);
        await theSide().query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = $1 and state = 'idle in transaction'`,
          [APPLICATION_NAME],
        );
        await sleep(100);
        return inner.getApiKey(organizationId, keyIds[5] as string);
      }),
    );
    const next = await store().transaction((inner) => inner.getApiKey(organizationId, keyIds[5] as string));

    expect(['busy', 'unreachable']).toContain(reasonOf(outcome));
    // Its COMMIT was never sent.
    expect(writeOutcomeOf(outcome)).toBe('not_made');
    expect(next?.id).toBe(keyIds[5]);
  });

  it('close() returns within the deadline while PostgreSQL is frozen, and leaves no connection behind', async () => {
    const other = await openStore(
      { kind: 'postgres', url: `${theCluster().url}?application_name=deadline_test_closing` },
      { timeoutMs: TIMEOUT_MS, poolSize: POOL_SIZE },
    );
    await Promise.all(everyKindOfCall(other.store).map(([, call]) => call()));

    await theCluster().freeze();
    const closing = await timed('close', () => other.store.close());
    await theCluster().thaw();
    const left = async () =>
      (
        await theSide().query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where application_name = $1',
          ['deadline_test_closing'],
        )
      ).rows[0]?.n;
    let remaining = await left();
    for (let attempt = 0; attempt < 50 && remaining !== 0; attempt++) {
      await sleep(100);
      remaining = await left();
    }

    report('frozen: close()', closing.ms);
    expect(reasonOf(closing)).toBe('succeeded');
    expect(closing.ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(remaining).toBe(0);
  });

  it('holds no more connections than its pools allow after the outages, and none the outages left behind', async () => {
    // A burst that needs more than one pipelined connection, then the retired backends of earlier tests must be gone.
    await Promise.all(
      Array.from({ length: 200 }, (_, n) => store().getApiKey(organizationId, keyIds[n % 40] as string)),
    );
    let backends = await storeBackends();
    for (let attempt = 0; attempt < 50 && backends.length > POOL_SIZE * 3; attempt++) {
      await sleep(100);
      backends = await storeBackends();
    }

    report('connections after the outages', backends.length, 'connections');
    // Pipeline, pool, and the migration and seeding pool (which closes its idle connections after 10 s).
    expect(backends.length).toBeLessThanOrEqual(POOL_SIZE * 3);
    // None is left running a statement the store gave up on, or inside a transaction it never ended.
    expect(backends.filter((backend) => backend.state !== 'idle')).toEqual([]);
  });
});
