import type Database from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// The store's queries come in a few dozen shapes (one per combination of filters and cursor); the bound only
// guards against a caller that builds unbounded SQL.
const MAX_STATEMENTS = 256;

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused. The driver prepares every
 * query anew, and preparing costs more than running one of the store's indexed queries.
 */
export function withStatementCache(database: Database.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= MAX_STATEMENTS) {
          statements.clear();
        }
        statement = database.prepare(sql) as unknown as SqliteStatement;
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
