import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import type { Store } from '../src/types.js';
import { createTestDatabase, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';

// In CI this throws when PostgreSQL is unreachable, so the tests on it are never skipped there.
const available = await postgresAvailable();

/**
 * PostgreSQL's update of a key reads the values its event records without a row lock, and changes the key only if
 * no other transaction did since; when one did, it runs again with the lock (kysely-store.ts, `updateWithEvent`).
 */
describe.runIf(available)('an update of a key on PostgreSQL, without a row lock first', () => {
  let database: TestDatabase;
  let store: Store;
  let client: pg.Client;
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
    const { apiKey } = await store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'before',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    return apiKey;
  }

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

  it('takes no row lock when nothing else changes the key', async () => {
    const key = await newKey();
    statements.length = 0;

    const updated = await store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'after' });

    expect(updated?.name).toBe('after');
    const updates = statements.filter((sql) => /\bupdate api_keys\b/.test(sql));
    expect(updates).toHaveLength(1);
    expect(updates[0]).not.toMatch(/for update/);
    expect(await changesOf(key.id)).toEqual([{ from: 'before', to: 'after' }]);
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
    const other = await store.createOrganization('other');

    expect(await store.updateApiKey(other.id, key.id, { name: 'after' })).toBeUndefined();
    expect(await changesOf(key.id)).toEqual([]);
    expect((await store.getApiKey(DEFAULT_ORGANIZATION.id, key.id))?.name).toBe('before');
  });
});
