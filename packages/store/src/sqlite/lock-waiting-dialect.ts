import type Database from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  SqliteDialect,
  type TransactionSettings,
} from 'kysely';
import { retryWhileLocked } from './lock-waits.js';
import { withStatementCache } from './statement-cache.js';

/** One use of the connection by Kysely (a statement on its own, or a transaction), with its deadline. */
class LockWaitingConnection implements DatabaseConnection {
  /** Whether a transaction of this use holds the write lock (BEGIN IMMEDIATE succeeded). */
  inTransaction = false;

  constructor(
    readonly inner: DatabaseConnection,
    /** `performance.now()` past which a wait for the lock gives up: the call's deadline, from when it asked. */
    readonly deadline: number,
  ) {}

  /**
   * A statement on its own takes the lock it needs itself: it is attempted without waiting and retried on timers.
   * Inside a transaction, which holds the write lock from its BEGIN IMMEDIATE, no statement waits for one.
   */
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) {
      return this.inner.executeQuery<R>(query);
    }
    return retryWhileLocked(() => this.inner.executeQuery<R>(query), this.deadline);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/**
 * Kysely's SQLite driver, with every wait for a lock held by another connection (the operator CLI, a backup, another
 * server) taken on timers rather than inside SQLite, whose busy handler sleeps on the event loop: a transaction begins
 * with BEGIN IMMEDIATE, which takes the write lock at once or fails, and is retried until the deadline. Once it holds
 * the lock, nothing inside it can wait for another connection (WAL: readers never block the writer).
 */
class LockWaitingDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly database: Database.Database,
    private readonly timeoutMs: number,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<LockWaitingConnection> {
    // The deadline counts the wait for the one connection too (another transaction may be waiting for the lock).
    const deadline = performance.now() + this.timeoutMs;
    return new LockWaitingConnection(await this.inner.acquireConnection(), deadline);
  }

  async beginTransaction(connection: LockWaitingConnection, _settings: TransactionSettings): Promise<void> {
    await retryWhileLocked(
      () => connection.inner.executeQuery(CompiledQuery.raw('begin immediate')),
      connection.deadline,
    );
    connection.inTransaction = true;
  }

  async commitTransaction(connection: LockWaitingConnection): Promise<void> {
    await this.inner.commitTransaction(connection.inner);
    connection.inTransaction = false;
  }

  async rollbackTransaction(connection: LockWaitingConnection): Promise<void> {
    connection.inTransaction = false;
    // SQLite has already rolled back a transaction whose COMMIT or statement failed on a full disk or an I/O error:
    // another ROLLBACK would fail, and its error would replace the one that says why.
    if (this.database.inTransaction) {
      await this.inner.rollbackTransaction(connection.inner);
    }
  }

  async savepoint(
    connection: LockWaitingConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.savepoint?.(connection.inner, name, compileQuery);
  }

  async rollbackToSavepoint(
    connection: LockWaitingConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(connection.inner, name, compileQuery);
  }

  async releaseSavepoint(
    connection: LockWaitingConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.(connection.inner, name, compileQuery);
  }

  releaseConnection(connection: LockWaitingConnection): Promise<void> {
    return this.inner.releaseConnection(connection.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * The SQLite dialect of the store: Kysely's, over better-sqlite3 with prepared statements reused, and with waits for
 * a lock on timers until `timeoutMs` (see LockWaitingDriver). The connection's busy_timeout must be 0.
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly database: Database.Database,
    private readonly timeoutMs: number,
  ) {
    super({ database: withStatementCache(database) });
  }

  override createDriver(): Driver {
    return new LockWaitingDriver(super.createDriver(), this.database, this.timeoutMs);
  }
}
