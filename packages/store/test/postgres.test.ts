import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyStore } from '../src/kysely-store.js';
import { openStore } from '../src/open-store.js';
import type { ApiKeyFilters, PageCursor } from '../src/types.js';
import { createTestDatabase, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';
import { describeStoreConformance, type StoreUnderTest } from './conformance.js';
import { CURSOR_SHAPES, FILTER_SHAPES } from './list-query-shapes.js';

// In CI this throws when PostgreSQL is unreachable, so these tests are never skipped there.
const available = await postgresAvailable();

/** A store on a database of its own; `setCreatedAt` writes through a second connection to create ties. */
async function postgresStore(options: Parameters<typeof openStore>[1] = {}): Promise<StoreUnderTest> {
  const database = await createTestDatabase();
  const store = await openStore({ kind: 'postgres', url: database.url }, { poolSize: 4, ...options });
  const side = new pg.Client({ connectionString: database.url });
  await side.connect();
  return {
    store,
    async setCreatedAt(apiKeyIds, micros) {
      const result = await side.query('update api_keys set created_at = $1 where id = any($2::text[])', [
        micros,
        apiKeyIds,
      ]);
      if (result.rowCount !== apiKeyIds.length) {
        throw new Error(`setCreatedAt changed ${result.rowCount} of ${apiKeyIds.length} keys`);
      }
    },
    async cleanup() {
      await side.end();
      await database.drop();
    },
  };
}

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; Plans?: PlanNode[] };
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

describe.runIf(available)('PostgreSQL', () => {
  describeStoreConformance('PostgreSQL', () => postgresStore(), { equalTimestamps: true });

  describe('query plans', () => {
    let database: TestDatabase;
    let store: KyselyStore;
    let explainer: pg.Client;
    let organizationId: string;
    let cursorId: string;
    const queries: { sql: string; parameters: readonly unknown[] }[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      store = await openStore(
        { kind: 'postgres', url: database.url },
        { onQuery: (sql, parameters) => queries.push({ sql, parameters }) },
      );
      await store.migrate();
      organizationId = (await store.createOrganization('plans')).id;
      await store.seedApiKeys({ organizationId, count: 20_000, workspaces: 3, users: 4, seed: 1 });
      await store.seedApiKeys({ organizationId: 'org_default', count: 5_000, workspaces: 3, users: 4, seed: 2 });
      cursorId = (await store.listApiKeys({ organizationId, limit: 1000 }))?.data.at(-1)?.id ?? '';
      explainer = new pg.Client({ connectionString: database.url });
      await explainer.connect();
      await explainer.query('analyze');
    });

    afterAll(async () => {
      await explainer?.end();
      await store?.close();
      await database?.drop();
    });

    async function plansOf(filters: ApiKeyFilters, cursorShape: (typeof CURSOR_SHAPES)[number]) {
      const cursor: PageCursor | undefined =
        cursorShape === 'no cursor' ? undefined : { direction: cursorShape, id: cursorId };
      queries.length = 0;
      const page = await store.listApiKeys({ organizationId, limit: 20, cursor, filters });
      expect(page?.data.length).toBeGreaterThan(0);
      const plans: PlanNode[][] = [];
      for (const { sql, parameters } of queries) {
        const result = await explainer.query(`explain (format json) ${sql}`, [...parameters]);
        plans.push(planNodes((result.rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan));
      }
      return plans;
    }

    describe.each(FILTER_SHAPES)('listing with %s', (_, filters) => {
      it.each(CURSOR_SHAPES)('and %s reads an index of the organization and never sorts', async (shape) => {
        const plans = await plansOf(filters, shape);
        expect(plans).toHaveLength(shape === 'no cursor' ? 1 : 2);
        for (const nodes of plans) {
          const types = nodes.map((node) => node['Node Type']);
          expect(types).not.toContain('Sort');
          expect(types).not.toContain('Incremental Sort');
          expect(types).not.toContain('Seq Scan');
          const indexes = nodes.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
          expect(indexes.length).toBeGreaterThan(0);
          for (const index of indexes) {
            expect(index).toMatch(/^api_keys_(pkey|org_\w+_idx)$/);
          }
        }
      });
    });
  });
});
