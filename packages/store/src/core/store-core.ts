import { CompiledQuery, type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';
import { KeyChangeHub } from '../key-changes.js';
import { type PreparedQuery, PreparedQueryCache } from '../prepared-query.js';
import { SameKeyBatches } from '../same-key-batches.js';
import type { BulkTable, BulkTables, DatabaseSchema } from '../schema.js';
import { nowMicros } from '../time.js';
import type { ConnectionPoolStats, EpochMicros, KeyChange, KeyChangeListener } from '../types.js';
import { atWriteTime } from '../write-time.js';
import type { CompiledWrite, DialectAdapter } from './dialect-adapter.js';

/** A write ready to run, and what makes its answer of the rows it returned once it has committed. */
export interface PreparedWrite<T> {
  statements: CompiledWrite;
  /**
   * Its statements when it follows another write of the same row in one transaction (`SameKeyBatches`), which holds
   * the row's lock until it commits: they need not take it again. `statements` when not given.
   */
  statementsUnderLock?: CompiledWrite;
  /**
   * Its statements to try first when it runs alone, cheaper than `statements`: they change nothing and return no
   * rows when another transaction changed the row after they read it. Then `statements` run.
   */
  optimisticStatements?: CompiledWrite;
  finish(rows: unknown[][]): T;
}

/** PostgreSQL's clock, read when evaluated (not at the start of the transaction), in microseconds since the epoch. */
export const DATABASE_NOW_MICROS = sql<number>`cast(extract(epoch from clock_timestamp()) * 1000000 as bigint)`;

/**
 * What every aggregate of the store runs on: its database (or the transaction open on it), the engine's adapter,
 * the prepared statements, the write path and the announcements of changed keys.
 */
export class StoreCore {
  constructor(
    readonly db: Kysely<DatabaseSchema>,
    readonly adapter: DialectAdapter,
    readonly prepared = new PreparedQueryCache(),
    private readonly keyChanges = new KeyChangeHub(),
    /** In a transaction's core: the changes to keys made in it, announced once it has committed. */
    private readonly uncommittedKeyChanges: KeyChange[] = [],
  ) {}

  #sameKeyBatches: SameKeyBatches<PreparedWrite<unknown>> | undefined;

  /**
   * The updates of a key that wait for the one in flight, committed together after it, on an engine that can run
   * writes together (PostgreSQL; SQLite commits the writes of a turn together anyway).
   */
  get sameKeyBatches(): SameKeyBatches<PreparedWrite<unknown>> | undefined {
    const { writeRowsTogether, isStatementError } = this.adapter;
    if (!writeRowsTogether || !isStatementError) {
      return undefined;
    }
    this.#sameKeyBatches ??= new SameKeyBatches<PreparedWrite<unknown>>({
      isStatementError,
      alone: async (write) => {
        if (write.optimisticStatements) {
          const rows = await this.adapter.writeRows(write.optimisticStatements);
          if (rows.length > 0) {
            return write.finish(rows);
          }
        }
        return write.finish(await this.adapter.writeRows(write.statements));
      },
      together: async (writes, since) => {
        const rows = await writeRowsTogether(
          writes.map((write, index) =>
            index === 0 ? write.statements : (write.statementsUnderLock ?? write.statements),
          ),
          since,
        );
        return writes.map((write, index) => write.finish(rows[index] ?? []));
      },
    });
    return this.#sameKeyBatches;
  }

  /** The core of the transaction `trx`, sharing everything else with this one. */
  private inside(trx: Kysely<DatabaseSchema>): StoreCore {
    return new StoreCore(trx, this.adapter, this.prepared, this.keyChanges);
  }

  /** Announces a change to a key: now, or once the transaction it was made in has committed. */
  keyChanged(change: KeyChange): void {
    if (this.db.isTransaction) {
      this.uncommittedKeyChanges.push(change);
      return;
    }
    this.announce([change]);
  }

  private announce(changes: readonly KeyChange[]): void {
    for (const change of changes) {
      this.keyChanges.publish({ type: 'changed', change });
      this.adapter.announceKeyChange(change).catch(() => {});
    }
  }

  watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>> {
    return this.keyChanges.listen(listener, (publish) => this.adapter.watchKeyChanges(publish));
  }

  /** Runs `work` on this core in a transaction (the one already open, if any). */
  async inTransaction<T>(work: (core: StoreCore) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) {
      return work(this);
    }
    let inside: StoreCore | undefined;
    const result = await this.db.transaction().execute((trx) => {
      inside = this.inside(trx);
      return work(inside);
    });
    this.announce(inside?.uncommittedKeyChanges ?? []);
    return result;
  }

  /**
   * Now, by the clock that times changes and decides expiry when a key changes. On PostgreSQL, the database's clock:
   * every replica's changes of one key are then timed by one clock, in the order they took the key's lock (an update
   * reads it in its statement, the same way).
   */
  async currentTime(): Promise<EpochMicros> {
    if (!isPostgres(this.db)) {
      return nowMicros();
    }
    const { rows } = await sql<{ now: number | string }>`select ${DATABASE_NOW_MICROS} as now`.execute(this.db);
    return Number(rows[0]?.now);
  }

  /**
   * Runs a prepared query and returns its rows as column values. Inside `transaction()` it goes through the
   * transaction's connection, so that it sees, and belongs to, the transaction.
   */
  async run<Name extends string>(
    query: PreparedQuery<Name>,
    values: Readonly<Record<Name, unknown>>,
  ): Promise<unknown[][]> {
    const parameters = query.parameters(values);
    if (this.db.isTransaction) {
      const { rows } = await this.db.executeQuery(CompiledQuery.raw(query.sql, parameters));
      return rows.map((row) => Object.values(row as object));
    }
    return this.adapter.queryRows(query.sql, parameters);
  }

  /**
   * Runs prepared queries as one write, through the adapter's group commit, and returns the rows of the last. Inside
   * `transaction()` they run on the transaction's connection, as part of it.
   */
  async write(compiled: CompiledWrite): Promise<unknown[][]> {
    if (this.db.isTransaction) {
      let rows: unknown[] = [];
      const now = nowMicros();
      for (const { sql: text, parameters } of compiled) {
        ({ rows } = await this.db.executeQuery(CompiledQuery.raw(text, atWriteTime(parameters, now))));
      }
      return rows.map((row) => Object.values(row as object));
    }
    return this.adapter.writeRows(compiled);
  }

  /** Runs a bulk insert, which writes through the engine's own connection, outside any transaction of this store. */
  async bulkInsert<Table extends BulkTable>(table: Table, chunks: Iterable<BulkTables[Table][]>): Promise<number> {
    if (this.db.isTransaction) {
      throw new Error('seeding cannot run inside transaction()');
    }
    return this.adapter.insertRows(table, chunks);
  }

  async ping(): Promise<void> {
    await this.run(
      this.prepared.get('ping', () => this.db.selectNoFrom((eb) => eb.lit(1).as('one'))),
      {},
    );
  }

  poolStats(): ConnectionPoolStats[] | undefined {
    return this.adapter.poolStats?.();
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.adapter.close();
  }
}
