import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { seedAuditEvents } from '../src/seeding/index.js';
import { openSqliteStore } from '../src/sqlite/open-sqlite-store.js';
import type { AuditEventFilters, EpochMicros, PageCursor, Store } from '../src/types.js';
import { testEngines } from '../testing/engines.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';
import { explainPostgres, type PlanNode, planNodes } from '../testing/query-plans.js';
import { type AuditTrailSubject, describeAuditTrail, REFUSED_BY_TEST, type RefusedChange } from './audit-trail.js';
import { tempDatabasePath } from './engine-stores.js';

// In CI this throws when PostgreSQL is unreachable, so these tests are never skipped there.
const available = await postgresAvailable();

/** Events of the organization the plans are checked on; enough for the planners to prefer an index to a sort. */
const PLAN_EVENTS = 20_000;

/** The name of each test trigger: distinct, so that one left behind by a failed test never blocks the next. */
let triggerCount = 0;

/** A store on a new temporary file, and a second connection to the file for what the store cannot do. */
async function sqliteSubject(): Promise<AuditTrailSubject> {
  const { path, removeDir } = await tempDatabasePath();
  const opened = openSqliteStore(path);
  let side: Database.Database | undefined;
  const sideQuery = async (statement: string) => {
    side ??= new Database(path);
    const prepared = side.prepare(statement);
    if (prepared.reader) {
      return prepared.all() as Record<string, unknown>[];
    }
    prepared.run();
    return [];
  };
  return {
    ...opened,
    sideQuery,
    async refuse(change: RefusedChange) {
      triggerCount += 1;
      const name = `refuse_${triggerCount}`;
      const when = 'id' in change && change.id !== undefined ? `when old.id = '${change.id}'` : '';
      await sideQuery(
        `create trigger ${name} ${change.timing} on ${change.table} ${when}
          begin select raise(abort, '${REFUSED_BY_TEST}'); end`,
      );
      return async () => {
        await sideQuery(`drop trigger ${name}`);
      };
    },
    async cleanup() {
      side?.close();
      await removeDir();
    },
  };
}

/** A store on a database of its own; the side connection is a new one per statement. */
async function postgresSubject(): Promise<AuditTrailSubject> {
  const database = await createTestDatabase();
  const opened = await openStore({ kind: 'postgres', url: database.url }, { poolSize: 4 });
  const sideQuery = async (statement: string) =>
    onPostgres(database.url, async (client) => (await client.query(statement)).rows as Record<string, unknown>[]);
  return {
    ...opened,
    sideQuery,
    async refuse(change: RefusedChange) {
      triggerCount += 1;
      const name = `refuse_${triggerCount}`;
      const condition = 'id' in change && change.id !== undefined ? `old.id = '${change.id}'` : 'true';
      await sideQuery(`create function ${name}() returns trigger language plpgsql as $$
        begin
          if ${condition} then
            raise exception '${REFUSED_BY_TEST}';
          end if;
          return new;
        end $$`);
      await sideQuery(
        `create trigger ${name} ${change.timing} on ${change.table} for each row execute function ${name}()`,
      );
      return async () => {
        await sideQuery(`drop trigger ${name} on ${change.table}; drop function ${name}()`);
      };
    },
    cleanup: () => database.drop(),
  };
}

/** The audit trail's subject on each engine; only PostgreSQL has TRUNCATE, which the trail must refuse too. */
const SUBJECTS = {
  sqlite: { name: 'SQLite file', open: sqliteSubject, truncate: false },
  postgres: { name: 'PostgreSQL', open: postgresSubject, truncate: true },
} as const;

describe.each(await testEngines())('$name', ({ kind }) => {
  const { name, open, truncate } = SUBJECTS[kind];
  describeAuditTrail(name, open, { truncate });
});

/** Moments the plan checks filter on: one a quarter of the trail from its oldest event, one from its newest. */
interface Moments {
  early: EpochMicros;
  late: EpochMicros;
}

/** Filters of the plan checks: one of each kind, and two types together. */
/** The index that must serve each filter's page: the primary key's, or the filter's own. */
type PageIndex = 'primary key' | 'target_id' | 'actor_id' | 'type';

const PLAN_FILTERS: [string, (moments: Moments) => AuditEventFilters, PageIndex][] = [
  ['no filter', () => ({}), 'primary key'],
  ['targetId', () => ({ targetId: 'apikey_seed7' }), 'target_id'],
  ['actorId', () => ({ actorId: 'adminkey_seed3' }), 'actor_id'],
  ['a common type', () => ({ types: ['api_key.updated'] }), 'type'],
  ['a rare type', () => ({ types: ['admin_key.disabled'] }), 'type'],
  ['two types', () => ({ types: ['api_key.created', 'api_key.rotated'] }), 'type'],
  ['occurredAfter', ({ early }) => ({ occurredAfter: early }), 'primary key'],
  ['occurredBefore', ({ late }) => ({ occurredBefore: late }), 'primary key'],
];

/** The name of a page index on each engine. */
const indexName = (index: PageIndex, engine: 'sqlite' | 'postgres') =>
  index === 'primary key'
    ? engine === 'sqlite'
      ? 'sqlite_autoindex_audit_events_1'
      : 'audit_events_pkey'
    : `audit_events_org_${index}_idx`;
const CURSOR_SHAPES = ['no cursor', 'after', 'before'] as const;

/** The trail the plans are checked on, in an organization of its own. */
interface PlanTrail {
  organizationId: string;
  /** The cursor of the pages that have one: an event in the middle of the trail. */
  middleId: string;
  moments: Moments;
}

/** Seeds the trail of the plan checks, and a smaller one of another organization. */
async function seedPlanTrail(store: Store): Promise<PlanTrail> {
  const organizationId = (await store.createOrganization('plans')).id;
  await seedAuditEvents(store, { organizationId, count: PLAN_EVENTS, targets: 200, actors: 10, seed: 1 });
  await seedAuditEvents(store, {
    organizationId: DEFAULT_ORGANIZATION.id,
    count: PLAN_EVENTS / 4,
    targets: 50,
    actors: 5,
    seed: 2,
  });
  const page = await store.listAuditEvents({ organizationId, limit: PLAN_EVENTS });
  const events = page.kind === 'page' ? page.events : [];
  const eventAt = (fraction: number) => {
    const event = events[Math.floor(events.length * fraction)];
    if (!event) {
      throw new Error(`the plan trail has ${events.length} events`);
    }
    return event;
  };
  return {
    organizationId,
    middleId: eventAt(1 / 2).id,
    moments: { early: eventAt(3 / 4).occurredAt, late: eventAt(1 / 4).occurredAt },
  };
}

/**
 * Lists one page of the plan trail, recording the statements it runs, and resolves with them. The page must not be
 * empty, so that the plans are those of a page that reads rows.
 */
async function statementsOfPage(
  store: Store,
  trail: PlanTrail,
  filtersAt: (moments: Moments) => AuditEventFilters,
  shape: (typeof CURSOR_SHAPES)[number],
  queries: { sql: string; parameters: readonly unknown[] }[],
): Promise<{ sql: string; parameters: readonly unknown[] }[]> {
  const cursor: PageCursor | undefined = shape === 'no cursor' ? undefined : { direction: shape, id: trail.middleId };
  queries.length = 0;
  const page = await store.listAuditEvents({
    organizationId: trail.organizationId,
    limit: 20,
    cursor,
    filters: filtersAt(trail.moments),
  });
  expect(page.kind === 'page' && page.events.length).toBe(20);
  // One statement: the cursor is read inside it (its existence is checked apart only when the page is empty).
  expect(queries).toHaveLength(1);
  return [...queries];
}

/** A step of a SQLite plan (`EXPLAIN QUERY PLAN`), with its place in the tree. */
interface SqlitePlanStep {
  id: number;
  parent: number;
  detail: string;
}

// A page reads an index of the organization (the primary key's is SQLite's autoindex), from the organization on.
const SQLITE_EVENT_STEP = new RegExp(
  '^SEARCH audit_events USING (?:COVERING )?INDEX ' +
    '(?:sqlite_autoindex_audit_events_1|audit_events_org_(?:target_id|actor_id|type)_idx) \\(organization_id=\\?',
);

describe.each([
  ['without statistics', false],
  ['after ANALYZE', true],
])('SQLite query plans of the audit trail %s', (_, analyze) => {
  let removeDir: () => Promise<void>;
  let store: Store;
  let explainer: Database.Database;
  let trail: PlanTrail;
  const queries: { sql: string; parameters: readonly unknown[] }[] = [];

  beforeAll(async () => {
    let path: string;
    ({ path, removeDir } = await tempDatabasePath());
    const opened = openSqliteStore(path, { onQuery: (sql, parameters) => queries.push({ sql, parameters }) });
    store = opened.store;
    await opened.migrator.migrateToLatest();
    trail = await seedPlanTrail(store);
    explainer = new Database(path);
    if (analyze) {
      explainer.exec('analyze');
    }
  });

  afterAll(async () => {
    explainer?.close();
    await store?.close();
    await removeDir?.();
  });

  describe.each(PLAN_FILTERS)('a page with %s', (_filter, filtersAt, index) => {
    it.each(CURSOR_SHAPES)(
      'and %s reads an index of the organization in page order, and sorts no table rows',
      async (shape) => {
        for (const { sql, parameters } of await statementsOfPage(store, trail, filtersAt, shape, queries)) {
          const steps = explainer.prepare(`explain query plan ${sql}`).all(...parameters) as SqlitePlanStep[];
          const details = steps.map((step) => step.detail);
          const eventSteps = details.filter((detail) => /\baudit_events\b/.test(detail));

          expect(eventSteps.length).toBeGreaterThan(0);
          // The page's own rows come from the filter's index (a cursor's probe reads the primary key's).
          expect(eventSteps.some((detail) => detail.includes(` INDEX ${indexName(index, 'sqlite')} `))).toBe(true);
          for (const detail of eventSteps) {
            expect(detail).toMatch(SQLITE_EVENT_STEP);
          }
          // Merging the pages of several types may sort them (each at most a page long), never the table's rows.
          for (const sort of steps.filter((step) => step.detail.includes('TEMP B-TREE'))) {
            const siblings = steps.filter((step) => step.parent === sort.parent).map((step) => step.detail);
            expect(siblings.filter((detail) => /\baudit_events\b/.test(detail))).toEqual([]);
            expect(sql).toMatch(/ union all /);
          }
        }
      },
    );
  });
});

/** Whether every row a Sort node of a PostgreSQL plan sorts comes through a Limit (a page), never from a scan. */
function sortsOnlyPages(node: PlanNode, underSort = false): boolean {
  const type = node['Node Type'];
  if (type === 'Limit') {
    return (node.Plans ?? []).every((child) => sortsOnlyPages(child, false));
  }
  if (underSort && /Scan$/.test(type)) {
    return false;
  }
  const sorting = underSort || type === 'Sort' || type === 'Incremental Sort';
  return (node.Plans ?? []).every((child) => sortsOnlyPages(child, sorting));
}

describe.runIf(available)('PostgreSQL query plans of the audit trail', () => {
  let database: TestDatabase;
  let store: Store;
  let explainer: pg.Client;
  let trail: PlanTrail;
  const queries: { sql: string; parameters: readonly unknown[] }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const opened = await openStore(
      { kind: 'postgres', url: database.url },
      { onQuery: (sql, parameters) => queries.push({ sql, parameters }) },
    );
    store = opened.store;
    await opened.migrator.migrateToLatest();
    trail = await seedPlanTrail(store);
    explainer = new pg.Client({ connectionString: database.url });
    await explainer.connect();
    // Vacuumed too, as autovacuum may do at any moment: the visibility map it sets changes the planner's costs.
    await explainer.query('vacuum analyze');
  });

  afterAll(async () => {
    await explainer?.end();
    await store?.close();
    await database?.drop();
  });

  describe.each(PLAN_FILTERS)('a page with %s', (_, filtersAt, index) => {
    it.each(CURSOR_SHAPES)(
      'and %s reads an index of the organization in page order, and sorts no table rows',
      async (shape) => {
        for (const { sql, parameters } of await statementsOfPage(store, trail, filtersAt, shape, queries)) {
          const { plan } = await explainPostgres(explainer, sql, parameters);
          const nodes = planNodes(plan);
          const types = nodes.map((node) => node['Node Type']);
          const indexes = nodes.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));

          expect(types).not.toContain('Seq Scan');
          expect(types).not.toContain('Bitmap Heap Scan');
          expect(indexes.length).toBeGreaterThan(0);
          expect(indexes).toContain(indexName(index, 'postgres'));
          for (const name of indexes) {
            expect(name).toMatch(/^audit_events_(pkey|org_(target_id|actor_id|type)_idx)$/);
          }
          expect(sortsOnlyPages(plan)).toBe(true);
        }
      },
    );
  });
});
