import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { beforeCommit } from './unavailable.js';

/** Runs `call`, recording any error it fails with as raised before a commit was sent (see `beforeCommit`). */
async function notCommitting<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw beforeCommit(error);
  }
}

/** One use of a connection by Kysely, which knows whether a transaction is open on it. */
class TrackedConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(readonly inner: DatabaseConnection) {}

  /** Inside a transaction, a statement commits nothing: its error ends the transaction before its COMMIT. */
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.inTransaction
      ? notCommitting(() => this.inner.executeQuery<R>(query))
      : this.inner.executeQuery<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** The driver of CommitTrackingDialect. */
class CommitTrackingDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<TrackedConnection> {
    return new TrackedConnection(await notCommitting(() => this.inner.acquireConnection()));
  }

  async beginTransaction(connection: TrackedConnection, settings: TransactionSettings): Promise<void> {
    await notCommitting(() => this.inner.beginTransaction(connection.inner, settings));
    connection.inTransaction = true;
  }

  /** Its error may come after the commit was made: it is left as the engine tells it. */
  async commitTransaction(connection: TrackedConnection): Promise<void> {
    connection.inTransaction = false;
    await this.inner.commitTransaction(connection.inner);
  }

  /** Its error is often the one that ended the transaction, rethrown by the connection: it is left as it is. */
  async rollbackTransaction(connection: TrackedConnection): Promise<void> {
    connection.inTransaction = false;
    await this.inner.rollbackTransaction(connection.inner);
  }

  async savepoint(connection: TrackedConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await notCommitting(async () => this.inner.savepoint?.(connection.inner, name, compile));
  }

  async rollbackToSavepoint(connection: TrackedConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await notCommitting(async () => this.inner.rollbackToSavepoint?.(connection.inner, name, compile));
  }

  async releaseSavepoint(connection: TrackedConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await notCommitting(async () => this.inner.releaseSavepoint?.(connection.inner, name, compile));
  }

  releaseConnection(connection: TrackedConnection): Promise<void> {
    return this.inner.releaseConnection(connection.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * A Kysely dialect whose errors say, for a write, whether its commit had been sent: one raised while acquiring a
 * connection, beginning a transaction or running a statement inside it is recorded as `beforeCommit` (the write was
 * not made); one raised by COMMIT, or by a statement on its own, is left for the engine to tell (it may have
 * committed). Any engine's dialect, unchanged otherwise.
 */
export class CommitTrackingDialect implements Dialect {
  constructor(private readonly inner: Dialect) {}

  createDriver(): Driver {
    return new CommitTrackingDriver(this.inner.createDriver());
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }
}
