import { type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely';

/** Whether a Kysely instance talks to PostgreSQL. */
export function isPostgres<Database>(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The type of identifier columns. Keyset pagination breaks `created_at` ties by `id`, so identifiers must sort
 * by their bytes on every engine: SQLite's default (BINARY) does; PostgreSQL needs the "C" collation, or the
 * database's locale would decide (and `a` would sort next to `A`).
 */
export function identifierType(db: Kysely<unknown>): 'text' | RawBuilder<unknown> {
  return isPostgres(db) ? sql`text collate "C"` : 'text';
}
