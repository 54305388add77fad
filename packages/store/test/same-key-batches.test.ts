import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { type BatchRunner, SameKeyBatches } from '../src/same-key-batches.js';
import type { Store } from '../src/types.js';
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

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ store } = await openMigratedStore({ kind: 'postgres', url: database.url }));
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await database?.drop();
  });

  async function newKey() {
    const { apiKey } = await store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'hot',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    return apiKey;
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
      const { rows } = await client.query<{ from: string; to: string }>(
        `select name_before as from, name_after as to from audit_events
         where target_id = $1 and type = 'api_key.updated' order by id`,
        [key.id],
      );
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
});
