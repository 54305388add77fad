import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, onPostgres, postgresAvailable } from '@apikeys/server/testing';
import { DEFAULT_ORGANIZATION, openMigratedStore, parseDatabaseUrl, type Store } from '@apikeys/store';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BenchDatabase, switchAuditTrailOff } from '../src/audit-trail-off.js';

const organizationId = DEFAULT_ORGANIZATION.id;
const createdBy = { type: 'service_account', id: 'svcacct_bench_test' } as const;

/** A bench database of each engine, migrated, with the SQL to drop the trigger behind the switch's back. */
interface Subject {
  database: BenchDatabase;
  dropTrigger(): Promise<void>;
  remove(): Promise<void>;
}

async function sqliteSubject(): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-audit-off-'));
  const path = join(dir, 'bench.sqlite');
  return {
    database: { engine: 'sqlite', databaseUrl: `file:${path}` },
    async dropTrigger() {
      const db = new Database(path);
      db.exec('drop trigger bench_audit_trail_off');
      db.close();
    },
    async remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSubject(): Promise<Subject> {
  const created = await createTestDatabase();
  return {
    database: { engine: 'postgres', databaseUrl: created.url },
    dropTrigger: () =>
      onPostgres(
        created.url,
        async (client) => void (await client.query('drop trigger bench_audit_trail_off on audit_events')),
      ),
    remove: () => created.drop(),
  };
}

/** The number of audit events in the default organization, read through the store's own API. */
async function eventCount(store: Store): Promise<number> {
  const page = await store.listAuditEvents({ organizationId, limit: 100 });
  if (page.kind !== 'page') {
    throw new Error('a list of audit events without a cursor found no page');
  }
  return page.events.length;
}

function describeSwitch(name: string, makeSubject: () => Promise<Subject>) {
  describe(`switchAuditTrailOff on ${name}`, () => {
    let subject: Subject;
    let store: Store;

    beforeEach(async () => {
      subject = await makeSubject();
      ({ store } = await openMigratedStore(parseDatabaseUrl(subject.database.databaseUrl)));
    });

    afterEach(async () => {
      await store.close();
      await subject.remove();
    });

    it('records no event of a creation or an update while off, and every event again once switched back', async () => {
      const { apiKey } = await store.createApiKey({ organizationId, name: 'before', createdBy });
      const before = await eventCount(store);

      const switchBack = await switchAuditTrailOff(subject.database);
      const { apiKey: created } = await store.createApiKey({ organizationId, name: 'while off', createdBy });
      const renamed = await store.updateApiKey(organizationId, apiKey.id, { name: 'renamed while off' });
      expect(await eventCount(store)).toBe(before);
      expect(created.name).toBe('while off');
      expect(renamed?.name).toBe('renamed while off');
      await switchBack();

      await store.updateApiKey(organizationId, apiKey.id, { name: 'renamed after' });
      expect(await eventCount(store)).toBe(before + 1);
    });

    it('rejects when switched back after events were recorded while it was meant to be off', async () => {
      const switchBack = await switchAuditTrailOff(subject.database);
      await subject.dropTrigger();
      await store.createApiKey({ organizationId, name: 'recorded', createdBy });

      await expect(switchBack()).rejects.toThrow('1 audit events were recorded while the audit trail was off');
    });
  });
}

describeSwitch('SQLite', sqliteSubject);
if (await postgresAvailable()) {
  describeSwitch('PostgreSQL', postgresSubject);
}
