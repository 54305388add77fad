import { namesGranting } from '@apikeys/permissions';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/migrations/index.js';
import { openStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { seededRandom } from '../src/random.js';
import { seedApiKeys } from '../src/seeding/index.js';
import type { ApiKeyFilters, PageCursor, Store } from '../src/types.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';
import { explainPostgres, type PlanNode, planNodes } from '../testing/query-plans.js';
import { listPage } from './conformance.js';
import { postgresStore } from './engine-stores.js';
import { insertLegacyKeys } from './legacy-keys.js';
import { CURSOR_SHAPES, FILTER_SHAPES, ROW_CHECKED_STATUS_SHAPES } from './list-query-shapes.js';

// In CI this throws when PostgreSQL is unreachable, so these tests are never skipped there.
const available = await postgresAvailable();

describe.runIf(available)('PostgreSQL', () => {
  describe('query plans', () => {
    let database: TestDatabase;
    let store: Store;
    let explainer: pg.Client;
    let organizationId: string;
    let cursorId: string;
    const queries: { sql: string; parameters: readonly unknown[] }[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      const opened = await openStore(
        { kind: 'postgres', url: database.url },
        { onQuery: (sql, parameters) => queries.push({ sql, parameters }) },
      );
      store = opened.store;
      await opened.migrator.migrateToLatest();
      organizationId = (await store.createOrganization('plans')).id;
      await seedApiKeys(store, { organizationId, count: 20_000, workspaces: 3, users: 4, seed: 1, lifecycle: true });
      await seedApiKeys(store, {
        organizationId: DEFAULT_ORGANIZATION.id,
        count: 5_000,
        workspaces: 3,
        users: 4,
        seed: 2,
        lifecycle: true,
      });
      // In the middle, so that every filter matches many keys on either side. Where fewer keys than a page are left,
      // PostgreSQL may rightly read them all and sort them (and did, with the cursor at the 1000th key).
      cursorId = (await listPage(store, { organizationId, limit: 10_000 })).keys.at(-1)?.id ?? '';
      explainer = new pg.Client({ connectionString: database.url });
      await explainer.connect();
      // A third of the keys have been used, so that the planner reads each page's uses as it would in production.
      await explainer.query(`insert into api_key_usage (api_key_id, last_used_at)
        select id, created_at from api_keys where abs(hashtext(id)) % 3 = 0`);
      // Vacuumed too, as autovacuum may do at any moment: the visibility map it sets changes the planner's costs.
      await explainer.query('vacuum analyze');
    });

    afterAll(async () => {
      await explainer?.end();
      await store?.close();
      await database?.drop();
    });

    async function plansOf(filters: ApiKeyFilters, cursorShape: (typeof CURSOR_SHAPES)[number], attributes = true) {
      const cursor: PageCursor | undefined =
        cursorShape === 'no cursor' ? undefined : { direction: cursorShape, id: cursorId };
      queries.length = 0;
      const page = await listPage(store, { organizationId, limit: 20, cursor, filters, attributes });
      expect(page.keys.length).toBeGreaterThan(0);
      const plans: PlanNode[][] = [];
      for (const { sql, parameters } of queries) {
        plans.push(planNodes((await explainPostgres(explainer, sql, parameters)).plan));
      }
      return plans;
    }

    /** Checks that each query reads an index of the organization in page order; returns the page query's Filters. */
    async function pageFiltersOf(filters: ApiKeyFilters, shape: (typeof CURSOR_SHAPES)[number]): Promise<string[]> {
      const plans = await plansOf(filters, shape);
      expect(plans).toHaveLength(shape === 'no cursor' ? 1 : 2);
      for (const nodes of plans) {
        const types = nodes.map((node) => node['Node Type']);
        expect(types).not.toContain('Sort');
        expect(types).not.toContain('Incremental Sort');
        expect(types).not.toContain('Seq Scan');
        expect(types).not.toContain('Bitmap Heap Scan');
        const indexes = nodes.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
        expect(indexes.length).toBeGreaterThan(0);
        for (const index of indexes) {
          expect(index).toMatch(/^api_keys_(pkey|org_\w+_idx)$|^api_key_usage_pkey$/);
        }
      }
      // (The cursor's own row is found by primary key; its organization is checked on that one row. Each key of the
      // page has its use read by the primary key of api_key_usage.)
      return (plans.at(-1) ?? []).flatMap((node) => (node.Filter ? [node.Filter] : []));
    }

    describe.each(FILTER_SHAPES)('listing with %s', (_, filters) => {
      it.each(CURSOR_SHAPES)(
        'and %s reads an index of the organization, checks every filter in it, and never sorts',
        async (shape) => {
          // In the page query, a condition left to a Filter would be checked on the table row of every entry read.
          expect(await pageFiltersOf(filters, shape)).toEqual([]);
        },
      );

      it.each(CURSOR_SHAPES)(
        'and %s reads each key of the page once, its permissions and metadata with its row',
        async (shape) => {
          const withAttributes = (await plansOf(filters, shape, true)).at(-1) ?? [];
          const without = (await plansOf(filters, shape, false)).at(-1) ?? [];
          const keyReads = (nodes: PlanNode[]) =>
            nodes.filter((node) => node['Relation Name'] === 'api_keys').map((node) => node['Node Type']);

          // One read of the organization's keys: the page's scan of a list index, which reads each key's row (the
          // list indexes leave the name out, migration 0003), its permissions and metadata with it: no second lookup
          // of the key by primary key for them.
          expect(keyReads(withAttributes)).toEqual(['Index Scan']);
          expect(keyReads(without)).toEqual(['Index Scan']);
        },
      );
    });

    // A permission page reads, for each name that grants it, the permission index in page order and each key by its
    // ID: never a whole table, never in parallel (the generic plan costs `limit $n` for a tenth of the table).
    describe.each<[string, ApiKeyFilters]>([
      ['a permission', { permission: 'documents.drafts.write' }],
      ['a permission and a status', { permission: 'documents.read', status: 'active' }],
    ])('listing with %s', (_, filters) => {
      it.each(CURSOR_SHAPES)('and %s reads the permission index, then keys by primary key only', async (shape) => {
        const plans = await plansOf(filters, shape);
        const nodes = plans.at(-1) ?? [];

        const types = nodes.map((node) => node['Node Type']);
        expect(types).not.toContain('Seq Scan');
        expect(types).not.toContain('Bitmap Heap Scan');
        expect(types).not.toContain('Hash Join');
        expect(types).not.toContain('Gather Merge');
        expect(types).not.toContain('Gather');
        const reads = nodes.filter((node) => node['Relation Name'] !== undefined);
        expect(reads.filter((node) => node['Relation Name'] === 'api_key_permissions')).toHaveLength(
          namesGranting(filters.permission ?? '').length,
        );
        const keyReads = reads.filter((node) => node['Relation Name'] === 'api_keys');
        for (const node of keyReads) {
          expect(node['Index Name']).toBe('api_keys_pkey');
        }
        // With no other filter, the branches read positions only, and the page reads its own keys: one read of keys.
        expect(keyReads).toHaveLength(
          Object.keys(filters).length === 1 ? 1 : namesGranting(filters.permission ?? '').length,
        );
      });
    });

    describe.each(ROW_CHECKED_STATUS_SHAPES)('listing with %s', (_, filters) => {
      it.each(CURSOR_SHAPES)(
        'and %s reads an index of the organization and never sorts; only the status is checked on rows',
        async (shape) => {
          const pageFilters = await pageFiltersOf(filters, shape);

          expect(pageFilters).toHaveLength(1);
          expect(pageFilters[0]).toMatch(/status/);
          expect(pageFilters[0]).not.toMatch(/workspace_id|created_by/);
        },
      );
    });
  });

  describe('list indexes', () => {
    // 0002 makes the list indexes covering, 0003 swaps name out for the filter columns with room for updates, 0004
    // adds the signed expiry, the scope, an index of the keys that can expire and one of the default workspace.
    it('each migration replaces the list indexes of a database with keys, and each down restores them', async () => {
      const database = await createTestDatabase();
      const db = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }),
      });
      const migrator = new Migrator({ db, provider: migrationProvider });
      const { store } = await openStore({ kind: 'postgres', url: database.url });
      const indexes = async () =>
        (
          await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes
            where tablename = 'api_keys' order by indexname`.execute(db)
        ).rows;
      const listIndexes = async () => (await indexes()).filter((index) => index.indexname.startsWith('api_keys_org_'));
      const tableOptions = async () =>
        (
          await sql<{ options: string[] | null }>`select reloptions as options from pg_class
          where relname = 'api_keys'`.execute(db)
        ).rows[0]?.options ?? null;
      try {
        expect((await migrator.migrateTo('0001-initial')).error).toBeUndefined();
        const initial = await indexes();
        const legacy = await insertLegacyKeys(db, DEFAULT_ORGANIZATION.id, 500);
        expect((await migrator.migrateTo('0002-covering-list-indexes')).error).toBeUndefined();
        const covering = await indexes();
        expect((await migrator.migrateTo('0003-postgres-list-indexes')).error).toBeUndefined();
        const filtering = await indexes();
        const filteringOptions = await tableOptions();
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const latest = await listIndexes();
        const latestOptions = await tableOptions();
        const page = await store.listApiKeys({
          organizationId: DEFAULT_ORGANIZATION.id,
          limit: 50,
          filters: { status: 'active' },
        });
        const defaultPage = await store.listApiKeys({
          organizationId: DEFAULT_ORGANIZATION.id,
          limit: 50,
          filters: { workspaceId: null },
        });
        expect((await migrator.migrateTo('0003-postgres-list-indexes')).error).toBeUndefined();
        const filteringAgain = await indexes();
        expect((await migrator.migrateTo('0002-covering-list-indexes')).error).toBeUndefined();
        const coveringAgain = await indexes();
        const optionsAfterDown = await tableOptions();
        expect((await migrator.migrateTo('0001-initial')).error).toBeUndefined();

        const namesOf = (list: { indexname: string }[]) =>
          list.map((index) => index.indexname).filter((name) => name.startsWith('api_keys_org_'));
        expect(namesOf(covering)).toEqual([
          'api_keys_org_created_covering_idx',
          'api_keys_org_creator_created_covering_idx',
          'api_keys_org_status_created_covering_idx',
          'api_keys_org_workspace_created_covering_idx',
        ]);
        expect(namesOf(filtering)).toEqual([
          'api_keys_org_created_idx',
          'api_keys_org_creator_created_filters_idx',
          'api_keys_org_status_created_filters_idx',
          'api_keys_org_workspace_created_filters_idx',
        ]);
        expect(namesOf(latest)).toEqual([
          'api_keys_org_created_filters_idx',
          'api_keys_org_creator_created_filters_idx',
          'api_keys_org_default_workspace_created_filters_idx',
          'api_keys_org_expiring_created_filters_idx',
          'api_keys_org_status_created_filters_idx',
          'api_keys_org_workspace_created_filters_idx',
        ]);
        const latestColumns = latest.map((index) => index.indexdef.replace(/^.*USING btree /, ''));
        const definitionOf = (name: string) =>
          latest.find((index) => index.indexname === `api_keys_org_${name}_created_filters_idx`)?.indexdef;
        // No name, so that a rename stays a heap-only update; the signed expiry in every index but the expiring one.
        expect(latestColumns.filter((columns) => /\bname\b/.test(columns))).toEqual([]);
        expect(latestColumns.filter((columns) => columns.includes('CASE status'))).toHaveLength(5);
        // The scope next to every trailing workspace_id; a partial index for each side of workspace_id is null.
        expect(latestColumns.filter((columns) => /workspace_id, scope\b/.test(columns))).toHaveLength(3);
        expect(definitionOf('expiring')).toMatch(
          /WHERE \(\(expires_at IS NOT NULL\) AND \(status <> 'archived'::text\)\)$/,
        );
        expect(definitionOf('workspace')).toMatch(/USING btree \(organization_id, workspace_id, created_at, id, /);
        expect(definitionOf('workspace')).toMatch(/\) WHERE \(workspace_id IS NOT NULL\)$/);
        expect(definitionOf('default_workspace')).toMatch(/USING btree \(organization_id, created_at, id, /);
        expect(definitionOf('default_workspace')).toMatch(
          /\) WHERE \(\(workspace_id IS NULL\) AND \(scope = 'workspace'::text\)\)$/,
        );
        expect(filteringOptions).toEqual(['fillfactor=85']);
        expect(latestOptions).toEqual(['fillfactor=85']);
        expect(page.kind === 'page' && page.keys.map((key) => key.id)).toEqual(
          legacy
            .filter((row) => row.status === 'active')
            .map((row) => row.id)
            .reverse()
            .slice(0, 50),
        );
        expect(defaultPage.kind === 'page' && defaultPage.keys.map((key) => key.id)).toEqual(
          legacy
            .filter((row) => row.workspace_id === null)
            .map((row) => row.id)
            .reverse()
            .slice(0, 50),
        );
        expect(filteringAgain).toEqual(filtering);
        expect(coveringAgain).toEqual(covering);
        expect(optionsAfterDown).toBeNull();
        expect(await indexes()).toEqual(initial);
      } finally {
        await store.close();
        await db.destroy();
        await database.drop();
      }
    });

    it('a rename on the latest schema is a heap-only update: it writes no index entry', async () => {
      const database = await createTestDatabase();
      const { store, migrator } = await openStore({ kind: 'postgres', url: database.url });
      try {
        await migrator.migrateToLatest();
        await seedApiKeys(store, {
          organizationId: DEFAULT_ORGANIZATION.id,
          count: 2000,
          workspaces: 3,
          users: 4,
          seed: 4,
          lifecycle: true,
        });
        const page = await listPage(store, { organizationId: DEFAULT_ORGANIZATION.id, limit: 100 });
        for (const [index, key] of page.keys.entries()) {
          await store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: `renamed ${index}` });
        }
        // A backend reports its statistics when it exits: close the store's connections, then read them.
        await store.close();
        const seen = await onPostgres(database.url, async (client) => {
          const counts = async () =>
            (
              await client.query<{ updates: string; hot: string }>(
                `select n_tup_upd as updates, n_tup_hot_upd as hot from pg_stat_user_tables where relname = 'api_keys'`,
              )
            ).rows[0];
          let counted = await counts();
          for (let attempt = 0; attempt < 50 && Number(counted?.updates) < 100; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            counted = await counts();
          }
          return counted;
        });

        expect(page.keys).toHaveLength(100);
        expect(Number(seen?.updates)).toBe(100);
        expect(Number(seen?.hot)).toBe(100);
      } finally {
        await store.close();
        await database.drop();
      }
    });

    // A B-tree entry holds at most 2704 bytes, and the list indexes carry the name: the longest name the API
    // accepts, 500 code points of four bytes each, must fit. Random characters, as repeated ones would compress.
    it('a key named with 500 random four-byte characters fits in the list indexes, created and renamed', async () => {
      const random = seededRandom(7);
      const longestName = () =>
        Array.from({ length: 500 }, () => String.fromCodePoint(0x10000 + Math.floor(random() * 0xf0000))).join('');
      const { store, migrator, cleanup } = await postgresStore();
      try {
        await migrator.migrateToLatest();
        const name = longestName();
        const { apiKey } = await store.createApiKey({
          organizationId: DEFAULT_ORGANIZATION.id,
          name,
          createdBy: { id: 'user_alice', type: 'user' },
        });
        const renamed = await store.updateApiKey(DEFAULT_ORGANIZATION.id, apiKey.id, { name: longestName() });
        const page = await listPage(store, {
          organizationId: DEFAULT_ORGANIZATION.id,
          limit: 1,
          filters: { status: 'active' },
        });

        expect(Buffer.byteLength(name)).toBe(2000);
        expect(renamed?.name).not.toBe(name);
        expect(page.keys).toEqual([renamed]);
      } finally {
        await store.close();
        await cleanup?.();
      }
    });
  });
});
