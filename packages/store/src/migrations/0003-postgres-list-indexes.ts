import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/** A list index: its name and its key columns, in order. */
interface ListIndex {
  name: string;
  columns: string[];
}

/** Share of each table page that PostgreSQL fills on insert: the rest lets an update stay on its page (HOT). */
const API_KEYS_FILLFACTOR = 85;

/** The covering list indexes of 0002, spelled out: a migration never reads another migration's code. */
const COVERING: ListIndex[] = [
  {
    name: 'api_keys_org_created_covering_idx',
    columns: [
      'organization_id',
      'created_at',
      'id',
      'status',
      'workspace_id',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_status_created_covering_idx',
    columns: [
      'organization_id',
      'status',
      'created_at',
      'id',
      'workspace_id',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_workspace_created_covering_idx',
    columns: [
      'organization_id',
      'workspace_id',
      'created_at',
      'id',
      'status',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_creator_created_covering_idx',
    columns: [
      'organization_id',
      'created_by_type',
      'created_by_id',
      'created_at',
      'id',
      'status',
      'workspace_id',
      'name',
      'partial_key_hint',
    ],
  },
];

/**
 * The list indexes for PostgreSQL: each leads with the organization and its filter, then the page order, then the
 * other filter columns. Those trailing columns are index keys, not INCLUDE columns: PostgreSQL checks conditions on
 * key columns inside the index scan (they show in "Index Cond"), but INCLUDE columns only on each table row.
 */
const FILTERING: ListIndex[] = [
  { name: 'api_keys_org_created_idx', columns: ['organization_id', 'created_at', 'id'] },
  {
    name: 'api_keys_org_status_created_filters_idx',
    columns: ['organization_id', 'status', 'created_at', 'id', 'workspace_id', 'created_by_type', 'created_by_id'],
  },
  {
    name: 'api_keys_org_workspace_created_filters_idx',
    columns: ['organization_id', 'workspace_id', 'created_at', 'id', 'status', 'created_by_type', 'created_by_id'],
  },
  {
    name: 'api_keys_org_creator_created_filters_idx',
    columns: ['organization_id', 'created_by_type', 'created_by_id', 'created_at', 'id', 'status', 'workspace_id'],
  },
];

async function createIndexes(db: Kysely<unknown>, indexes: ListIndex[]): Promise<void> {
  for (const { name, columns } of indexes) {
    await db.schema.createIndex(name).on('api_keys').columns(columns).execute();
  }
}

async function dropIndexes(db: Kysely<unknown>, indexes: ListIndex[]): Promise<void> {
  for (const { name } of indexes) {
    await db.schema.dropIndex(name).execute();
  }
}

/**
 * On PostgreSQL only, replaces the covering list indexes of 0002 with indexes that hold the filter columns but not
 * `name`, so that a rename can be a heap-only update, and leaves room in each table page for such updates. SQLite
 * keeps the covering indexes. The fill factor applies to pages written from now on. Why, with the figures:
 * docs/benchmarks.md, "PostgreSQL list indexes (migration 0003)".
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    return;
  }
  await createIndexes(db, FILTERING);
  await dropIndexes(db, COVERING);
  await sql`alter table api_keys set (fillfactor = ${sql.lit(API_KEYS_FILLFACTOR)})`.execute(db);
}

/** Restores the covering indexes of 0002 and the default fill factor. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    return;
  }
  await sql`alter table api_keys reset (fillfactor)`.execute(db);
  await createIndexes(db, COVERING);
  await dropIndexes(db, FILTERING);
}
