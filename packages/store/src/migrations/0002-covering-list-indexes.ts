import type { Kysely } from 'kysely';

/** What a list page filters on or returns besides `organization_id`, `created_at` and `id`. */
const PAGE_COLUMNS = ['status', 'workspace_id', 'created_by_type', 'created_by_id', 'name', 'partial_key_hint'];

/** One list index: the filter columns its equality prefix holds after `organization_id`. */
interface ListIndex {
  name: string;
  filters: string[];
}

const FILTERS = {
  none: [],
  status: ['status'],
  workspace: ['workspace_id'],
  creator: ['created_by_type', 'created_by_id'],
};

/** The indexes of 0001: the equality prefix and the page order, nothing more. */
const NARROW: ListIndex[] = [
  { name: 'api_keys_org_created_idx', filters: FILTERS.none },
  { name: 'api_keys_org_status_created_idx', filters: FILTERS.status },
  { name: 'api_keys_org_workspace_created_idx', filters: FILTERS.workspace },
  { name: 'api_keys_org_creator_created_idx', filters: FILTERS.creator },
];

/** The same prefixes and order, followed by every other column a list page filters on or returns. */
export const COVERING: ListIndex[] = [
  { name: 'api_keys_org_created_covering_idx', filters: FILTERS.none },
  { name: 'api_keys_org_status_created_covering_idx', filters: FILTERS.status },
  { name: 'api_keys_org_workspace_created_covering_idx', filters: FILTERS.workspace },
  { name: 'api_keys_org_creator_created_covering_idx', filters: FILTERS.creator },
];

export async function createIndexes(db: Kysely<unknown>, indexes: ListIndex[], covering: boolean): Promise<void> {
  for (const { name, filters } of indexes) {
    const trailing = covering ? PAGE_COLUMNS.filter((column) => !filters.includes(column)) : [];
    await db.schema
      .createIndex(name)
      .on('api_keys')
      .columns(['organization_id', ...filters, 'created_at', 'id', ...trailing])
      .execute();
  }
}

export async function dropIndexes(db: Kysely<unknown>, indexes: ListIndex[]): Promise<void> {
  for (const { name } of indexes) {
    await db.schema.dropIndex(name).execute();
  }
}

/**
 * Makes every list page an index-only read. With a narrow index, a page read the table row of every index entry
 * in its range, to check the other filters and to return the row: with all three filters that is about twelve
 * scattered table rows per key returned, and once the table outgrows the page cache each is a read of its own,
 * so a page cost twice as much at a million keys as at ten thousand. A covering index checks every filter and
 * returns every column from the index entries, which lie side by side in page order. One index per filter rather
 * than one per combination: a combination scans a few more entries of the index of one of its filters, while
 * every extra index costs each insert a B-tree insert.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createIndexes(db, COVERING, true);
  await dropIndexes(db, NARROW);
}

/** Restores the indexes of 0001. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await createIndexes(db, NARROW, false);
  await dropIndexes(db, COVERING);
}
