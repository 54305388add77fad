import type { BulkTable, BulkTables } from '../schema.js';
import type { ConnectionPoolStats, KeyChange, KeyChangeListener } from '../types.js';

/** The few things that differ between database engines; everything else is one Kysely implementation. */
export interface DialectAdapter {
  /**
   * Inserts many rows into a table, as fast as the engine allows, committing every so many rows (chunks are small:
   * an adapter groups them into larger transactions). Called outside any Kysely transaction. Returns the number of
   * rows inserted.
   */
  insertRows<Table extends BulkTable>(table: Table, chunks: Iterable<BulkTables[Table][]>): Promise<number>;
  /**
   * Runs one statement on its own (autocommit), outside any transaction of the caller, and returns its rows as
   * arrays of column values in the order of the select or returning list (no row objects: they cost more than the
   * read itself on large pages). It must report the statement to the store's `onQuery` listener.
   */
  queryRows(sql: string, parameters: unknown[]): Promise<unknown[][]>;
  /**
   * Runs one write: statements that commit together or not at all, the last of which returns rows (`returning`),
   * like `queryRows`, except that the engine may commit it together with other writes issued at about the same
   * time (group commit). It resolves only once the write is durable, and a write that fails fails alone. PostgreSQL
   * takes one statement (a data-modifying WITH makes several changes in one); SQLite takes several.
   */
  writeRows(statements: CompiledWrite): Promise<unknown[][]>;
  /** How busy the engine's connection pools are; absent for an engine without pools. */
  poolStats?(): ConnectionPoolStats[];
  /**
   * Tells the other processes on this database that a key changed, once the change has committed. Best effort: a
   * process that misses it serves what it read until its cache's time to live runs out.
   */
  announceKeyChange(change: KeyChange): Promise<void>;
  /** Listens for the other processes' changes (see `Store.watchKeyChanges`); resolves with the function that stops. */
  watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>>;
  /** Releases the engine's connections. */
  close(): Promise<void>;
  /**
   * Runs writes (each as `writeRows` takes it) in one transaction, in order, and resolves with the rows of each once
   * it has committed; if one fails, none is made. Its deadline runs from `since` (`performance.now()` when the
   * first of them came). Given (PostgreSQL), concurrent updates of one key are committed
   * together (`SameKeyBatches`).
   */
  writeRowsTogether?(writes: readonly CompiledWrite[], since: number): Promise<unknown[][][]>;
  /** Whether an error is one a statement raised, which rolled its transaction back and left the connection usable. */
  isStatementError?(error: unknown): boolean;
}

/** The statements of one write, compiled: they commit together or not at all. */
export type CompiledWrite = readonly { sql: string; parameters: unknown[] }[];
