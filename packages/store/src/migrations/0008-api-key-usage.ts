import { type Kysely, sql } from 'kysely';
import { identifierType, isPostgres } from '../dialect.js';

/**
 * When each API key was last verified as valid, to the minute: one row per key ever used, written in batches by the
 * servers (`recordKeyUsage`). A table of its own, so that recording use never rewrites a key's row (nor its list
 * indexes, nor waits for its lock) and the list pages keep reading their covering indexes; a page reads each of its
 * keys' use by primary key. No foreign key: keys are never deleted, and checking one would lock the key's row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  let table = db.schema
    .createTable('api_key_usage')
    .addColumn('api_key_id', identifierType(db), (col) => col.primaryKey())
    .addColumn('last_used_at', 'bigint', (col) => col.notNull());
  if (!isPostgres(db)) {
    // Its rows are found by key ID only: stored in the primary key's b-tree, one lookup each.
    table = table.modifyEnd(sql`without rowid`);
  }
  await table.execute();
}

/** Drops the record of use. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_key_usage').execute();
}
