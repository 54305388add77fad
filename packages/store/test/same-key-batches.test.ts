import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { type BatchRunner, SameKeyBatches } from '../src/same-key-batches.js';
import type { Store } from '../src/types.js';
import { createTestKey } from '../testing/keys.js';
import { createTestDatabase, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';

// In CI this throws when PostgreSQL is unreachable, so the tests on it are never skipped there.
const available = await postgresAvailable();

class StatementError extends Error {}

/** A store that records each write by name, and how each batch ran: alone or together. */
function recordingRunner(failing: (name: string) => Error | undefined = () => undefined) {
  const runs: string[][] = [];
  const released: (() => void)[] = [];
  const store = {
    async apply(name: string): Promise<string> {
      const error = failing(name);
      if (error) {
        throw error;
      }
      return `${name} done`;
    },
  };
  type Write = (on: typeof store) => Promise<string>;
  const runner: BatchRunner<Write> = {
    async alone(write: Write): Promise<string> {
      runs.push(['alone']);
      // The first write waits to be released, so that others queue behind it.
      if (runs.length === 1) {
        await new Promise<void>((resolve) => released.push(resolve));
      }
      return write(store);
    },
    async together(writes: readonly Write[]): Promise<unknown[]> {
      runs.push(['together', String(writes.length)]);
      const results: unknown[] = [];
      for (const write of writes) {
        results.push(await write(store));
      }
      return results;
    },
    isStatementError: (error) => error instanceof StatementError,
  };
  return { runner, runs, releaseFirst: () => released.shift()?.() };
}

const apply =
  (name: string) =>
  (store: { apply(name: string): Promise<string> }): Promise<string> =>
    store.apply(name);

describe('SameKeyBatches', () => {
  it('runs the writes that wait for a key together, in the order they came, each with its own answer', async () => {
    const { runner, runs, releaseFirst } = recordingRunner();
    const batches = new SameKeyBatches(runner);

    const first = batches.write('key_1', apply('a'));
    const waiting = ['b', 'c', 'd'].map((name) => batches.write('key_1', apply(name)));
    const otherKey = batches.write('key_2', apply('x'));
    releaseFirst();

    expect(await Promise.all([first, ...waiting, otherKey])).toEqual([
      'a done',
      'b done',
      'c done',
      'd done',
      'x done',
    ]);
    expect(runs).toEqual([['alone'], ['alone'], ['together', '3']]);
  });

  it('runs each write of a batch alone when one of them fails on its statement: only that one fails', async () => {
    const { runner, runs, releaseFirst } = recordingRunner((name) =>
      name === 'c' ? new StatementError('c is refused') : undefined,
    );
    const batches = new SameKeyBatches(runner);

    const first = batches.write('key_1', apply('a'));
    const waiting = ['b', 'c', 'd'].map((name) => batches.write('key_1', apply(name)));
    releaseFirst();
    const settled = await Promise.allSettled([first, ...waiting]);

    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))).toEqual(
      ['a done', 'b done', 'Error: c is refused', 'd done'],
    );
    expect(runs).toEqual([['alone'], ['together', '3'], ['alone'], ['alone'], ['alone']]);
  });

  it('fails every write of a batch that failed otherwise (a lost connection), without running them again', async () => {
    const { runner, runs, releaseFirst } = recordingRunner((name) =>
      name === 'c' ? new Error('connection lost') : undefined,
    );
    const batches = new SameKeyBatches(runner);

    const first = batches.write('key_1', apply('a'));
    const waiting = ['b', 'c'].map((name) => batches.write('key_1', apply(name)));
    releaseFirst();
    const settled = await Promise.allSettled([first, ...waiting]);

    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(runs).toEqual([['alone'], ['together', '2']]);
  });
});

describe.runIf(available)('concurrent updates of one key on PostgreSQL', () => {
  let database: TestDatabase;
  let store: Store;
  let client: pg.Client;
  /** The SQL of every statement the store sent. */
  const statements: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ store } = await openMigratedStore(
      { kind: 'postgres', url: database.url },
      { onQuery: (sql) => statements.push(sql) },
    ));
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await database?.drop();
  });

  async function newKey() {
    return (await createTestKey(store, DEFAULT_ORGANIZATION.id, { name: 'hot' })).apiKey;
  }

  /** The name changes the key's update events recorded, in the order of the events. */
  async function changesOf(keyId: string) {
    const { rows } = await client.query<{ from: string; to: string }>(
      `select name_before as from, name_after as to from audit_events
       where target_id = $1 and type = 'api_key.updated' order by id`,
      [keyId],
    );
    return rows;
  }

  /** Resolves once another connection of the database waits for a lock. */
  async function anotherConnectionWaitsForALock(): Promise<void> {
    for (let attempt = 0; attempt < 500; attempt += 1) {
      const { rows } = await client.query(
        `select 1 from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
      );
      if (rows.length > 0) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('no connection waited for a lock within 5 s');
  }

  /** The names each update event of the key recorded, in the order of the events, and the transactions they took. */
  async function updateEvents(keyId: string) {
    const { rows } = await client.query<{ to: string; xmin: string }>(
      `select name_after as to, xmin::text as xmin from audit_events
       where target_id = $1 and type = 'api_key.updated' order by id`,
      [keyId],
    );
    return { names: rows.map((row) => row.to), transactions: new Set(rows.map((row) => row.xmin)).size };
  }

  it('applies every update in the order it came, with its own answer and event, in fewer transactions', async () => {
    const key = await newKey();
    const names = Array.from({ length: 40 }, (_, index) => `rename ${index}`);

    const answers = await Promise.all(
      names.map((name) => store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name })),
    );

    expect(answers.map((answer) => answer?.name)).toEqual(names);
    expect((await store.getApiKey(DEFAULT_ORGANIZATION.id, key.id))?.name).toBe('rename 39');
    const events = await updateEvents(key.id);
    expect(events.names).toEqual(names);
    expect(events.transactions).toBeLessThan(names.length);
  });

  it('records an unbroken chain of changes when two processes update one key, and another organization none', async () => {
    const key = await newKey();
    const otherOrganization = (await store.createOrganization('other')).id;
    const { store: replica } = await openMigratedStore({ kind: 'postgres', url: database.url });
    try {
      const updates = Array.from({ length: 60 }, (_, index) => {
        const through = index % 2 === 0 ? store : replica;
        // Every third update comes through another organization: it must change nothing, in a batch of its own.
        const organizationId = index % 3 === 2 ? otherOrganization : DEFAULT_ORGANIZATION.id;
        return through.updateApiKey(organizationId, key.id, { name: `rename ${index}` });
      });
      const answers = await Promise.all(updates);

      expect(answers.filter((answer) => answer !== undefined)).toHaveLength(40);
      const rows = await changesOf(key.id);
      expect(rows).toHaveLength(40);
      // Each event's "from" is the previous one's "to": no update read the key under another's feet.
      rows.forEach((row, index) => {
        expect(row.from).toBe(index === 0 ? 'hot' : rows[index - 1]?.to);
      });
      expect((await store.getApiKey(DEFAULT_ORGANIZATION.id, key.id))?.name).toBe(rows.at(-1)?.to);
    } finally {
      await replica.close();
    }
  });

  it('fails only the update whose statement fails, and applies the others', async () => {
    const key = await newKey();
    // PostgreSQL refuses a NUL character in text: an error of that statement alone.
    const names = ['first', 'second', 'bad \u0000 name', 'fourth'];

    const settled = await Promise.allSettled(
      names.map((name) => store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name })),
    );

    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value?.name : 'failed'))).toEqual([
      'first',
      'second',
      'failed',
      'fourth',
    ]);
    expect((await updateEvents(key.id)).names).toEqual(['first', 'second', 'fourth']);
  });

  // An update alone reads the key's old values without a row lock, and changes it only if no other transaction did
  // since; when one did, it runs again with the lock (api-keys/update-api-key.ts, `updateWithEvent`).
  it('takes no row lock for an update alone when nothing else changes the key', async () => {
    const key = await newKey();
    statements.length = 0;

    const updated = await store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'after' });

    expect(updated?.name).toBe('after');
    const updates = statements.filter((sql) => /\bupdate api_keys\b/.test(sql));
    expect(updates).toHaveLength(1);
    expect(updates[0]).not.toMatch(/for update/);
    expect(await changesOf(key.id)).toEqual([{ from: 'hot', to: 'after' }]);
  });

  it('records what another transaction committed while the update waited, not what it had read', async () => {
    const key = await newKey();
    await client.query('begin');
    await client.query(`update api_keys set name = 'committed meanwhile' where id = $1`, [key.id]);
    const update = store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'after' });
    try {
      await anotherConnectionWaitsForALock();
    } finally {
      await client.query('commit');
    }

    const updated = await update;

    expect(updated?.name).toBe('after');
    expect(await changesOf(key.id)).toEqual([{ from: 'committed meanwhile', to: 'after' }]);
  });

  it('answers an update of a key of another organization with no key, and records nothing', async () => {
    const key = await newKey();
    const other = await store.createOrganization('other organization');

    expect(await store.updateApiKey(other.id, key.id, { name: 'after' })).toBeUndefined();
    expect(await changesOf(key.id)).toEqual([]);
    expect((await store.getApiKey(DEFAULT_ORGANIZATION.id, key.id))?.name).toBe('hot');
  });
});
