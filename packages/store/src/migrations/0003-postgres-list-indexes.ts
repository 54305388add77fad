import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';
import { COVERING, createIndexes, dropIndexes, NARROW } from './0002-covering-list-indexes.js';

/**
 * Share of each table page that PostgreSQL fills on insert. The rest is left for new versions of the page's rows, so
 * that an update can stay on the page and skip the indexes (a "heap-only tuple" update).
 */
const API_KEYS_FILLFACTOR = 85;

/**
 * On PostgreSQL only, goes back to the narrow list indexes of 0001 and leaves room in each table page for updates.
 *
 * The covering indexes of 0002 hold `name` and `status`, the two columns an update changes, so every rename wrote a
 * new entry into each of the four list indexes and, as the row could no longer be updated in place, into the
 * primary key and the secret hash index too: measured with pgbench on 100k keys, 3,056 updates/s with them against
 * 5,761/s without them, and every rename heap-only with this fill factor (a status change still writes the status
 index, which holds the column). PostgreSQL reads the table rows of a page by
 * index order cheaply, and its page times at 1M keys stayed within 1.2× those at 10k on the narrow indexes
 * (docs/benchmarks.md). SQLite keeps the covering indexes: without them its pages filtered on all three filters cost
 * twice as much at 1M keys as at 10k (0002), and its updates meet their target with them.
 *
 * The fill factor applies to pages written from now on; existing rows move into such pages as they are updated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) {
    return;
  }
  await createIndexes(db, NARROW, false);
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
  await dropIndexes(db, NARROW);
}
