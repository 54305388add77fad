import { Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConnectionLostError, DeadlineError } from '../src/postgres/client-errors.js';
import { pipelineClientConfig, statementName } from '../src/postgres/open-postgres-store.js';
import { OPEN_ANOTHER_AT, QueryPipeline } from '../src/postgres/query-pipeline.js';
import { postgresAvailable, TEST_POSTGRES_URL } from '../testing/postgres-available.js';

// In CI this throws when PostgreSQL is unreachable, so these tests are never skipped there.
const available = await postgresAvailable();

const BACKEND_PID = { name: 'pipeline_test_pid', text: 'select pg_backend_pid()', values: [] };
const ECHO = { name: 'pipeline_test_echo', text: 'select $1::int as n' };
const SLEEP = { name: 'pipeline_test_sleep', text: 'select pg_sleep($1::float8 / 1000), pg_backend_pid()' };

describe.runIf(available)('QueryPipeline (PostgreSQL)', () => {
  let side: pg.Client;
  const opened: QueryPipeline[] = [];
  const pipelineOf = (maxConnections: number) => {
    const pipeline = new QueryPipeline({ connectionString: TEST_POSTGRES_URL }, maxConnections);
    opened.push(pipeline);
    return pipeline;
  };
  const pidOf = async (pipeline: QueryPipeline) => (await pipeline.query(BACKEND_PID))[0]?.[0] as number;

  beforeAll(async () => {
    side = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await side.connect();
    return () => side.end();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((pipeline) => pipeline.close()));
  });

  it('answers every statement of one turn with its own rows, all on one connection', async () => {
    const pipeline = pipelineOf(4);
    await pidOf(pipeline);

    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => pipeline.query({ ...ECHO, values: [n] })));
    const pids = await Promise.all(Array.from({ length: 10 }, () => pidOf(pipeline)));

    expect(answers).toEqual(Array.from({ length: 50 }, (_, n) => [[n]]));
    expect(new Set(pids).size).toBe(1);
  });

  it('sends the statements of one turn in one write once connected', async () => {
    const pipeline = pipelineOf(1);
    await pidOf(pipeline);
    const writes = [vi.spyOn(Socket.prototype, '_write'), vi.spyOn(Socket.prototype, '_writev')];
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => pipeline.query({ ...ECHO, values: [n] })));

      expect(answers).toHaveLength(20);
      expect(writes.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(1);
    } finally {
      for (const spy of writes) {
        spy.mockRestore();
      }
    }
  });

  it('fails a failing statement alone: the others of its turn, before and after it, succeed', async () => {
    const pipeline = pipelineOf(1);

    const outcomes = await Promise.allSettled([
      pipeline.query({ ...ECHO, values: [1] }),
      pipeline.query({ name: 'pipeline_test_divide', text: 'select 1 / $1::int', values: [0] }),
      pipeline.query({ ...ECHO, values: [3] }),
    ]);

    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: [[1]] });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: [[3]] });
  });

  it('commits each write on its own, even when a later statement of the same turn fails', async () => {
    const table = `pipeline_test_${process.pid}`;
    await side.query(`create table ${table} (n int primary key)`);
    try {
      const pipeline = pipelineOf(1);
      const insert = { name: `insert_${table}`, text: `insert into ${table} values ($1) returning n` };
      const outcomes = await Promise.allSettled([
        pipeline.query({ ...insert, values: [1] }),
        pipeline.query({ ...insert, values: [1] }),
        pipeline.query({ ...insert, values: [2] }),
      ]);
      const { rows } = await side.query(`select n from ${table} order by n`);

      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(rows).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await side.query(`drop table ${table}`);
    }
  });

  it(`a turn shares the least busy connection, and opens another only when each has ${OPEN_ANOTHER_AT} statements in flight, up to the limit`, async () => {
    const sleepers = (pipeline: QueryPipeline, count: number) =>
      Array.from({ length: count }, () => pipeline.query({ ...SLEEP, values: [20] }));
    const pidsOf = async (queries: Promise<unknown[][]>[]) =>
      new Set((await Promise.all(queries)).map((rows) => (rows[0] as [unknown, number])[1]));

    const twoAtMost = pipelineOf(2);
    const belowTheMark = sleepers(twoAtMost, OPEN_ANOTHER_AT - 1);
    await nextTurn();
    const reachingTheMark = sleepers(twoAtMost, 1);
    await nextTurn();
    const opening = sleepers(twoAtMost, 1);
    await nextTurn();
    const leastBusy = sleepers(twoAtMost, 1);
    const [first, second] = await Promise.all([
      pidsOf([...belowTheMark, ...reachingTheMark]),
      pidsOf([...opening, ...leastBusy]),
    ]);

    const oneAtMost = pipelineOf(1);
    const full = sleepers(oneAtMost, OPEN_ANOTHER_AT * 2);
    await nextTurn();
    const beyond = sleepers(oneAtMost, 1);
    const only = await pidsOf([...full, ...beyond]);

    expect(first.size).toBe(1);
    expect(second.size).toBe(1);
    expect(second).not.toEqual(first);
    expect(only.size).toBe(1);
  });

  it('replaces a connection that breaks: its statement in flight fails, the next one succeeds', async () => {
    const pipeline = pipelineOf(1);
    const pid = await pidOf(pipeline);

    const inFlight = pipeline.query({ ...SLEEP, values: [5000] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await side.query('select pg_terminate_backend($1)', [pid]);
    const failure = await inFlight;
    const nextPid = await pidOf(pipeline);

    // PostgreSQL's FATAL error (57P01) when it came before the socket closed, the store's own error otherwise: never
    // an error told only by the driver's wording.
    if (failure instanceof pg.DatabaseError) {
      expect(failure.code).toBe('57P01');
    } else {
      expect(failure).toBeInstanceOf(ConnectionLostError);
      expect(failure).toMatchObject({ statementSent: true });
    }
    expect(nextPid).not.toBe(pid);
  });

  it('fails a statement not answered within the deadline, and those sent behind it, with its own DeadlineError', async () => {
    const pipeline = new QueryPipeline({ connectionString: TEST_POSTGRES_URL }, 1, 300);
    opened.push(pipeline);
    const pid = await pidOf(pipeline);

    const [slow, behind] = await Promise.allSettled([
      pipeline.query({ ...SLEEP, values: [2000] }),
      pipeline.query({ ...ECHO, values: [1] }),
    ]);
    const nextPid = await pidOf(pipeline);

    for (const outcome of [slow, behind]) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(DeadlineError);
      expect(error).toMatchObject({ statementSent: true });
    }
    expect(nextPid).not.toBe(pid);
  });

  it('an unreachable server fails the statements instead of leaving them waiting', async () => {
    const pipeline = new QueryPipeline({ connectionString: 'postgres://postgres@127.0.0.1:1/none' }, 2);
    opened.push(pipeline);

    for (const n of [1, 2]) {
      const error = await pipeline.query({ ...ECHO, values: [n] }).catch((reason: unknown) => reason);
      expect(error).toBeInstanceOf(ConnectionLostError);
      expect(error).toMatchObject({ statementSent: false, message: expect.stringMatching(/ECONNREFUSED/) });
    }
  });

  it('close() ends its connections once their statements are answered, and refuses new ones', async () => {
    const pipeline = pipelineOf(2);
    const pid = await pidOf(pipeline);
    const answer = pipeline.query({ ...SLEEP, values: [100] });

    await pipeline.close();
    const { rows } = await side.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid]);

    expect(await answer).toHaveLength(1);
    expect(rows).toEqual([{ n: 0 }]);
    await expect(pipeline.query({ ...ECHO, values: [1] })).rejects.toThrow('the store is closed');
  });

  it('runs a transaction on a connection of its own: its statements in order, nothing else between them', async () => {
    const pipeline = pipelineOf(2);
    const turnPid = await pidOf(pipeline);

    const [transaction, alongside] = await Promise.all([
      pipeline.transaction([BACKEND_PID, { ...ECHO, values: [1] }, { ...ECHO, values: [2] }]),
      pipeline.query(BACKEND_PID),
    ]);

    expect(transaction.slice(1)).toEqual([[[1]], [[2]]]);
    expect(transaction[0]?.[0]?.[0]).not.toBe(turnPid);
    expect(alongside[0]?.[0]).toBe(turnPid);
  });

  it('makes none of a transaction when one of its statements fails, and keeps the connection', async () => {
    const pipeline = pipelineOf(1);
    const table = `pipeline_tx_${process.pid}`;
    await side.query(`create table if not exists ${table} (n int primary key)`);
    const insert = { name: `pipeline_test_insert_${process.pid}`, text: `insert into ${table} values ($1)` };
    try {
      await expect(
        pipeline.transaction([
          { ...insert, values: [1] },
          { ...insert, values: [1] },
          { ...insert, values: [2] },
        ]),
      ).rejects.toThrow(/duplicate key/);
      const { rows } = await side.query(`select count(*)::int as n from ${table}`);
      expect(rows[0]?.n).toBe(0);
      await pipeline.transaction([{ ...insert, values: [3] }]);
      expect((await side.query(`select n from ${table}`)).rows).toEqual([{ n: 3 }]);
    } finally {
      await side.query(`drop table ${table}`);
    }
  });

  it('runs at most maxConnections transactions at once: the others wait for a connection, in turn', async () => {
    const pipeline = new QueryPipeline({ connectionString: TEST_POSTGRES_URL }, 1, 1_500);
    opened.push(pipeline);
    const pidOfTransaction = async (sleepMs: number) =>
      (await pipeline.transaction([{ ...SLEEP, values: [sleepMs] }]))[0]?.[0]?.[1];

    const [first, second, third] = await Promise.all([pidOfTransaction(100), pidOfTransaction(0), pidOfTransaction(0)]);
    expect(new Set([first, second, third]).size).toBe(1);

    // One that misses its deadline loses its connection, and the next one waiting gets a new one. The next one's
    // deadline runs from when it came: a second before the late one's ends leaves it a second for a new connection.
    const late = pidOfTransaction(5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const [lateOutcome, next] = await Promise.allSettled([late, pidOfTransaction(0)]);
    expect(lateOutcome.status).toBe('rejected');
    expect(next).toMatchObject({ status: 'fulfilled' });
    expect(next.status === 'fulfilled' && next.value).not.toBe(first);
  });

  it("the store's pipeline plans a prepared statement once, without its parameters, from its first execution", async () => {
    const pipeline = new QueryPipeline(pipelineClientConfig({ connectionString: TEST_POSTGRES_URL }), 1);
    opened.push(pipeline);
    // Left to choose (plan_cache_mode = auto), PostgreSQL plans the first five executions with their values.
    for (let n = 0; n < 6; n++) {
      await pipeline.query({ ...ECHO, values: [n] });
    }

    const [plans] = await pipeline.query({
      name: 'pipeline_test_plans',
      text: 'select generic_plans::int, custom_plans::int from pg_prepared_statements where name = $1',
      values: [ECHO.name],
    });

    expect(plans).toEqual([6, 0]);
  });

  it("the store's pipeline plans without parallel workers or JIT compilation", async () => {
    const pipeline = new QueryPipeline(pipelineClientConfig({ connectionString: TEST_POSTGRES_URL }), 1);
    opened.push(pipeline);

    const [settings] = await pipeline.query({
      name: 'pipeline_test_settings',
      text: `select current_setting('jit') as jit,
        current_setting('max_parallel_workers_per_gather') as workers,
        current_setting('plan_cache_mode') as plans`,
      values: [],
    });

    expect(settings).toEqual(['off', '0', 'force_generic_plan']);
  });
});

describe('statementName', () => {
  it('names a statement by its SQL: the same in every process, different for other SQL, within 63 bytes', () => {
    const name = statementName('select 1');

    expect(statementName('select 1')).toBe(name);
    expect(statementName('select 2')).not.toBe(name);
    expect(name).toMatch(/^apikeys_[0-9a-f]{32}$/);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
  });
});
