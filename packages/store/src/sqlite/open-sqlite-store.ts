import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { KyselyStore } from '../kysely-store.js';
import type { ApiKeysTable, DatabaseSchema } from '../schema.js';
import { queryLog, type StoreOptions } from '../store-options.js';
import { GroupCommit } from './group-commit.js';
import { StatementCache, withStatementCache } from './statement-cache.js';

/** The in-memory database path understood by SQLite. */
export const SQLITE_MEMORY = ':memory:';

// Page cache during a bulk load, in KiB (a negative cache_size counts KiB): 256 MiB.
const BULK_LOAD_CACHE_KIB = -262_144;

/**
 * Opens (creating if needed) a SQLite database in WAL mode. `synchronous = FULL` makes every commit durable
 * before it returns, so an acknowledged update survives a crash of the process or of the machine.
 */
export function openSqliteStore(path: string, options: StoreOptions = {}): KyselyStore {
  if (path !== SQLITE_MEMORY) {
    mkdirSync(dirname(path), { recursive: true });
  }
  const database = new Database(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');

  // Prepared on first use: the table does not exist until the migrations have run.
  let insertChunk: ((rows: ApiKeysTable[]) => void) | undefined;
  const prepareInsert = () => {
    const insert = database.prepare<ApiKeysTable>(
      `insert into api_keys (id, organization_id, name, workspace_id, created_at, created_by_id, created_by_type,
         partial_key_hint, secret_hash, status, updated_at)
       values (@id, @organization_id, @name, @workspace_id, @created_at, @created_by_id, @created_by_type,
         @partial_key_hint, @secret_hash, @status, @updated_at)`,
    );
    return database.transaction((rows: ApiKeysTable[]) => {
      for (const row of rows) {
        insert.run(row);
      }
    });
  };

  /**
   * A bulk load writes index pages all over the file: a large page cache keeps them in memory between commits, and
   * `synchronous = NORMAL` syncs at checkpoints rather than at every chunk (a crash loses at most the chunk in
   * flight, never an earlier one, and never corrupts). Both settings are restored afterwards.
   */
  const bulkInsert = (chunks: Iterable<ApiKeysTable[]>): number => {
    insertChunk ??= prepareInsert();
    const cacheSize = database.pragma('cache_size', { simple: true });
    database.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB}`);
    database.pragma('synchronous = NORMAL');
    let inserted = 0;
    try {
      for (const chunk of chunks) {
        insertChunk(chunk);
        inserted += chunk.length;
      }
    } finally {
      database.pragma('synchronous = FULL');
      database.pragma(`cache_size = ${Number(cacheSize)}`);
    }
    return inserted;
  };

  const db = new Kysely<DatabaseSchema>({
    dialect: new SqliteDialect({ database: withStatementCache(database) }),
    ...queryLog(options.onQuery),
  });

  // The store's prepared queries run on the statement directly, in raw mode (rows as arrays). Kysely's statements
  // are cached apart: raw mode is a setting of the statement.
  const rawStatements = new StatementCache(database, (statement) => statement.raw(true));
  // Another caller's transaction is open on the one connection: wait for it through Kysely's connection lock
  // rather than read its uncommitted writes or write into it.
  const afterTransaction = async (sql: string, parameters: unknown[]): Promise<unknown[][]> => {
    const { rows } = await db.executeQuery(CompiledQuery.raw(sql, parameters));
    return rows.map((row) => Object.values(row as object));
  };
  const queryRows = async (sql: string, parameters: unknown[]): Promise<unknown[][]> => {
    if (database.inTransaction) {
      return afterTransaction(sql, parameters);
    }
    options.onQuery?.(sql, parameters);
    return rawStatements.get(sql).all(...parameters) as unknown[][];
  };
  const groupCommit = new GroupCommit(database, rawStatements, afterTransaction, options.onQuery);

  return new KyselyStore(db, {
    insertApiKeyRows: async (chunks) => bulkInsert(chunks),
    queryRows,
    writeRows: (sql, parameters) => groupCommit.write(sql, parameters),
    // Kysely's destroy() closes the better-sqlite3 handle it was given.
    close: async () => {},
  });
}
