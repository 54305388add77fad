import type Database from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// The store's queries come in a few dozen shapes (one per combination of filters and cursor); the bound only
// guards against a caller that builds unbounded SQL.
const MAX_STATEMENTS = 256;

/** Prepared statements by SQL text, each prepared once (and set up by `setUp`, if given) and then reused. */
export class StatementCache {
  readonly #statements = new Map<string, Database.Statement>();

  constructor(
    private readonly database: Database.Database,
    private readonly setUp?: (statement: Database.Statement) => void,
  ) {}

  get(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      if (this.#statements.size >= MAX_STATEMENTS) {
        this.#statements.clear();
      }
      statement = this.database.prepare(sql);
      this.setUp?.(statement);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused. The driver prepares every
 * query anew, and preparing costs more than running one of the store's indexed queries.
 */
export function withStatementCache(database: Database.Database): SqliteDatabase {
  const statements = new StatementCache(database);
  return {
    close: () => database.close(),
    prepare: (sql: string) => statements.get(sql) as unknown as SqliteStatement,
  };
}
