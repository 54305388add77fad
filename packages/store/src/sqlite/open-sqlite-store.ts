import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely } from 'kysely';
import { CommitTrackingDialect } from '../commit-tracking-dialect.js';
import { KyselyMigrator } from '../core/migrator.js';
import { kyselyStore } from '../kysely-store.js';
import { type BulkTable, bulkColumns, type DatabaseSchema } from '../schema.js';
import {
  DEFAULT_BULK_LOAD_ROWS_PER_COMMIT,
  DEFAULT_TIMEOUT_MS,
  queryLog,
  type StoreOptions,
} from '../store-options.js';
import { nowMicros } from '../time.js';
import type { KeyChangeListener, OpenedStore } from '../types.js';
import { classifyingUnavailable } from '../unavailable.js';
import { atWriteTime } from '../write-time.js';
import { classifySqliteError } from './classify-errors.js';
import { GroupCommit, type Statement } from './group-commit.js';
import { LockWaitingSqliteDialect } from './lock-waiting-dialect.js';
import { isLocked, retryWhileLocked } from './lock-waits.js';
import { StatementCache } from './statement-cache.js';

// SQLite opens a file it cannot write (a read-only file system, say) read-only without a word, and the connection
// stays so when the file becomes writable again.
const READ_ONLY_WARNING =
  'the database is read-only: reads are served, but every update gets 503 (read_only) until the server is ' +
  'restarted on a writable file system';

/**
 * Whether the connection can write: false for a read-only database, true when merely locked. SQLite refuses a
 * read-only file only when a page is written, so this writes the header's user_version (unchanged) and rolls back.
 */
function isWritable(database: Database.Database): boolean {
  const userVersion = Number(database.pragma('user_version', { simple: true }));
  try {
    database.exec(`begin immediate; pragma user_version = ${userVersion}`);
    return true;
  } catch (error) {
    return !String((error as { code?: unknown }).code).startsWith('SQLITE_READONLY');
  } finally {
    if (database.inTransaction) {
      database.exec('rollback');
    }
  }
}

/** How often a watcher of key changes reads the file's version: changes by other processes show within this. */
export const DATA_VERSION_POLL_MS = 200;

/**
 * Calls `listener` with `reset` whenever another connection (the operator CLI, another process on the same file) has
 * committed to the file: SQLite says only that something changed (`data_version`), never what. Reading it is a
 * memory read, with no I/O. Resolves with the function that stops.
 */
function watchDataVersion(database: Database.Database, listener: KeyChangeListener): () => Promise<void> {
  const read = () => Number(database.pragma('data_version', { simple: true }));
  let version = read();
  const timer = setInterval(() => {
    if (!database.open) {
      return;
    }
    const now = read();
    if (now !== version) {
      version = now;
      listener({ type: 'reset' });
    }
  }, DATA_VERSION_POLL_MS);
  timer.unref();
  return async () => clearInterval(timer);
}

/** The in-memory database path understood by SQLite. */
export const SQLITE_MEMORY = ':memory:';

// Page cache during a bulk load, in KiB (a negative cache_size counts KiB): 256 MiB.
const BULK_LOAD_CACHE_KIB = -262_144;

/** Sets the store's connection up: durable WAL commits, foreign keys, and no wait for a lock inside SQLite. */
export function configureConnection(database: Database.Database): void {
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  // Group commit runs each write in a savepoint, and SQLite copies every page a savepoint changes into a
  // sub-journal first, spilled to a temporary file past 64 KiB: a batch of updates that record audit events wrote
  // five times as many pages to it as to the WAL. In memory, the sub-journal of a batch is a few MiB at most and
  // no system call (docs/benchmarks.md, "The audit trail").
  database.pragma('temp_store = MEMORY');
  // A lock held by another connection fails a statement at once (SQLITE_BUSY): SQLite's busy handler would sleep on
  // the event loop, stalling every request, `/health` included. The store waits for the lock on timers instead, until
  // the deadline (group commit, LockWaitingSqliteDialect, retryWhileLocked); then the call fails as `busy`.
  database.pragma('busy_timeout = 0');
}

/**
 * Opens (creating if needed) a SQLite database in WAL mode. `synchronous = FULL` makes every commit durable
 * before it returns, so an acknowledged update survives a crash of the process or of the machine.
 */
export function openSqliteStore(path: string, options: StoreOptions = {}): OpenedStore {
  if (path !== SQLITE_MEMORY) {
    mkdirSync(dirname(path), { recursive: true });
  }
  const database = new Database(path);
  const timeoutMs = Math.trunc(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  configureConnection(database);

  const rowsPerCommit = options.bulkLoadRowsPerCommit ?? DEFAULT_BULK_LOAD_ROWS_PER_COMMIT;
  type InsertRows = (chunks: Iterator<Record<string, unknown>[]>) => { inserted: number; done: boolean };
  // Prepared on first use: the tables do not exist until the migrations have run.
  const insertRowsOf = new Map<BulkTable, InsertRows>();
  const prepareInsert = (table: BulkTable): InsertRows => {
    const columns = bulkColumns(table);
    const insert = database.prepare<unknown[]>(
      `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`,
    );
    // One transaction takes chunks until it holds `rowsPerCommit` rows. Rows go in as each chunk is
    // generated, so that no chunk outlives the next one.
    return database.transaction((chunks: Iterator<Record<string, unknown>[]>) => {
      let inserted = 0;
      while (inserted < rowsPerCommit) {
        const next = chunks.next();
        if (next.done) {
          return { inserted, done: true };
        }
        for (const row of next.value) {
          insert.run(columns.map((column) => row[column]));
        }
        inserted += next.value.length;
      }
      return { inserted, done: false };
    });
  };

  /**
   * A bulk load writes index pages all over the file. Large transactions write each page to the WAL once per
   * commit rather than once per chunk, a large page cache keeps the pages in memory between commits, and
   * `synchronous = NORMAL` syncs at checkpoints rather than at every commit (a crash loses at most the
   * transaction in flight, never an earlier one, and never corrupts). Both settings are restored afterwards.
   * A bulk load (the operator CLI's seeding, the benchmarks'; never the server's) is synchronous from start to end,
   * so that no other call runs on the connection with these settings: it waits for a lock inside SQLite, until the
   * deadline.
   */
  const bulkInsert = (table: BulkTable, chunks: Iterable<Record<string, unknown>[]>): number => {
    let insertRows = insertRowsOf.get(table);
    if (!insertRows) {
      insertRows = prepareInsert(table);
      insertRowsOf.set(table, insertRows);
    }
    const cacheSize = database.pragma('cache_size', { simple: true });
    database.pragma(`cache_size = ${BULK_LOAD_CACHE_KIB}`);
    database.pragma('synchronous = NORMAL');
    database.pragma(`busy_timeout = ${timeoutMs}`);
    let total = 0;
    try {
      const iterator = chunks[Symbol.iterator]();
      for (;;) {
        const { inserted, done } = insertRows(iterator);
        total += inserted;
        if (done) {
          return total;
        }
      }
    } finally {
      database.pragma('busy_timeout = 0');
      database.pragma('synchronous = FULL');
      database.pragma(`cache_size = ${Number(cacheSize)}`);
    }
  };

  const db = new Kysely<DatabaseSchema>({
    dialect: new CommitTrackingDialect(new LockWaitingSqliteDialect(database, timeoutMs)),
    ...queryLog(options.onQuery),
  });

  // The store's prepared queries run on the statement directly, in raw mode (rows as arrays). Kysely's statements
  // are cached apart: raw mode is a setting of the statement.
  const rawStatements = new StatementCache(database, (statement) => statement.reader && statement.raw(true));
  // Another caller's transaction is open on the one connection: wait for it through Kysely's connection lock
  // rather than read its uncommitted writes or write into it.
  const afterTransaction = async (statements: readonly Statement[]): Promise<unknown[][]> => {
    const run = async (executor: Kysely<DatabaseSchema>) => {
      let rows: unknown[] = [];
      // The moment of the write, read once the transaction before it has ended.
      const now = nowMicros();
      for (const { sql, parameters } of statements) {
        ({ rows } = await executor.executeQuery(CompiledQuery.raw(sql, atWriteTime(parameters, now))));
      }
      return rows.map((row) => Object.values(row as object));
    };
    return statements.length === 1 ? db.connection().execute(run) : db.transaction().execute(run);
  };
  const queryRows = async (sql: string, parameters: unknown[]): Promise<unknown[][]> => {
    const read = (): unknown[][] | Promise<unknown[][]> => {
      if (database.inTransaction) {
        return afterTransaction([{ sql, parameters }]);
      }
      options.onQuery?.(sql, parameters);
      return rawStatements.get(sql).all(...parameters) as unknown[][];
    };
    try {
      return await read();
    } catch (error) {
      // A read in WAL mode waits for no writer; it finds the file locked only for a moment (another connection
      // recovering the WAL after a crash, say): it asks again on timers, like a write.
      if (!isLocked(error)) {
        throw error;
      }
      return retryWhileLocked(read, performance.now() + timeoutMs);
    }
  };
  const groupCommit = new GroupCommit(database, rawStatements, afterTransaction, timeoutMs, options.onQuery);

  const store = kyselyStore(db, {
    insertRows: async (table, chunks) => bulkInsert(table, chunks as Iterable<Record<string, unknown>[]>),
    queryRows,
    writeRows: (statements) => groupCommit.write(statements),
    // This store's own changes reach its watchers directly; another process's show in the file's version.
    announceKeyChange: async () => {},
    watchKeyChanges: async (listener) => watchDataVersion(database, listener),
    // Kysely's destroy() closes the better-sqlite3 handle it was given.
    close: async () => {},
  });
  return {
    store: classifyingUnavailable(store, classifySqliteError),
    migrator: new KyselyMigrator(db),
    warnings: path === SQLITE_MEMORY || isWritable(database) ? [] : [READ_ONLY_WARNING],
  };
}
