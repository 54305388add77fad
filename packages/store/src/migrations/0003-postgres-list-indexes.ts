import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';
import { COVERING, createIndexes, dropIndexes } from './0002-covering-list-indexes.js';

/**
 * Share of each table page that PostgreSQL fills on insert. The rest is left for new versions of the page's rows, so
 * that an update can stay on the page and skip the indexes (a "heap-only tuple" update).
 */
const API_KEYS_FILLFACTOR = 85;

/**
 * The list indexes for PostgreSQL: each leads with the organization and its filter, then the page order, then the
 * other filter columns. Those trailing columns are index keys, not INCLUDE columns: PostgreSQL checks conditions on
 * key columns inside the index scan (they show in "Index Cond"), while it checks INCLUDE columns only on the table
 * row of every entry it reads.
 */
const FILTERING: { name: string; columns: string[] }[] = [
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

/**
 * On PostgreSQL only, replaces the covering list indexes of 0002 with indexes that hold the filter columns but not
 * `name`, and leaves room in each table page for updates.
 *
 * The covering indexes hold `name`, so every rename wrote a new entry into each of the four list indexes and, as the
 * row could no longer be updated in place, into the primary key and the secret hash index too. Measured with pgbench
 * on 100k keys: 3,056 renames/s with them, 5,761/s with the narrow indexes of 0001; with this fill factor every
 * rename is heap-only. The narrow indexes, though, checked the other filters on the table row of every entry they
 * read: with all three filters, about twelve table rows per key returned, so that such a page cost three times as
 * much PostgreSQL CPU at 1M keys as at 10k. With the filter columns in the index, a page reads only the table rows it
 * returns. (At 1M keys such a page still costs PostgreSQL more than at 10k: those rows lie on as many pages, read at
 * random, and the table outgrows the buffer cache; docs/benchmarks.md.) SQLite keeps the covering indexes of 0002: it has no heap-only updates, and its
 * renames meet their target with them.
 *
 * The fill factor applies to pages written from now on; existing rows move into such pages as they are updated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    return;
  }
  for (const { name, columns } of FILTERING) {
    await db.schema.createIndex(name).on('api_keys').columns(columns).execute();
  }
  await dropIndexes(db, COVERING);
  await sql`alter table api_keys set (fillfactor = ${sql.lit(API_KEYS_FILLFACTOR)})`.execute(db);
}

/** Restores the covering indexes of 0002 and the default fill factor. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    return;
  }
  await sql`alter table api_keys reset (fillfactor)`.execute(db);
  await createIndexes(db, COVERING, true);
  for (const { name } of FILTERING) {
    await db.schema.dropIndex(name).execute();
  }
}
