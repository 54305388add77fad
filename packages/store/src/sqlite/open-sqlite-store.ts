import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { KyselyStore } from '../kysely-store.js';
import type { ApiKeysTable, DatabaseSchema } from '../schema.js';
import { queryLog, type StoreOptions } from '../store-options.js';

/** The in-memory database path understood by SQLite. */
export const SQLITE_MEMORY = ':memory:';

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
  let insertMany: ((rows: ApiKeysTable[]) => void) | undefined;
  const bulkInsert = (rows: ApiKeysTable[]) => {
    if (!insertMany) {
      const insert = database.prepare<ApiKeysTable>(
        `insert into api_keys (id, organization_id, name, workspace_id, created_at, created_by_id, created_by_type,
           partial_key_hint, secret_hash, status, updated_at)
         values (@id, @organization_id, @name, @workspace_id, @created_at, @created_by_id, @created_by_type,
           @partial_key_hint, @secret_hash, @status, @updated_at)`,
      );
      insertMany = database.transaction((batch: ApiKeysTable[]) => {
        for (const row of batch) {
          insert.run(row);
        }
      });
    }
    insertMany(rows);
  };

  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database }), ...queryLog(options.onQuery) });
  return new KyselyStore(db, {
    insertApiKeyRows: async (rows) => bulkInsert(rows),
    // Kysely's destroy() closes the better-sqlite3 handle it was given.
    close: async () => {},
  });
}
