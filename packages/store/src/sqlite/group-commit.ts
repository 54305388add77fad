import type Database from 'better-sqlite3';
import type { StatementCache } from './statement-cache.js';

interface PendingWrite {
  sql: string;
  parameters: unknown[];
  resolve(rows: unknown[][]): void;
  reject(error: unknown): void;
}

type Outcome = { rows: unknown[][] } | { error: unknown };

/**
 * Group commit for single-statement writes on SQLite. With `synchronous = FULL` every commit waits for the disk,
 * and better-sqlite3 waits on the event loop: one update per commit caps a server near 2,000 writes/s whatever its
 * CPU. The writes issued during one turn of the event loop (every request that arrived in one poll) are queued and
 * run together at the end of the turn in one transaction, each inside a savepoint of its own, so that one failing
 * write fails alone. Each write's promise settles only after that transaction has committed: a write is
 * acknowledged only once it is durable, exactly as before, and a failed commit fails every write of the batch.
 */
export class GroupCommit {
  #pending: PendingWrite[] = [];
  readonly #runBatch: Database.Transaction<(batch: PendingWrite[]) => Outcome[]>;

  /**
   * `statements` prepares each write (in raw mode, so it must return rows). `whileInTransaction` runs a write when
   * another caller's transaction (Kysely's) holds the one connection at the end of the turn: it waits for that
   * transaction to end rather than writing into it. `onStatement` hears of each statement run directly.
   */
  constructor(
    private readonly database: Database.Database,
    statements: StatementCache,
    private readonly whileInTransaction: (sql: string, parameters: unknown[]) => Promise<unknown[][]>,
    onStatement?: (sql: string, parameters: readonly unknown[]) => void,
  ) {
    // A transaction function called inside another runs in a savepoint (better-sqlite3's nested transactions).
    const runOne = database.transaction((write: PendingWrite) => {
      onStatement?.(write.sql, write.parameters);
      return statements.get(write.sql).all(...write.parameters) as unknown[][];
    });
    this.#runBatch = database.transaction((batch: PendingWrite[]) =>
      batch.map((write): Outcome => {
        try {
          return { rows: runOne(write) };
        } catch (error) {
          return { error };
        }
      }),
    );
  }

  /** Queues one write statement; resolves with its rows (as arrays) once it has committed. */
  write(sql: string, parameters: unknown[]): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) {
        setImmediate(() => this.#flush());
      }
      this.#pending.push({ sql, parameters, resolve, reject });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    if (this.database.inTransaction) {
      for (const write of batch) {
        this.whileInTransaction(write.sql, write.parameters).then(write.resolve, write.reject);
      }
      return;
    }
    let outcomes: Outcome[];
    try {
      // IMMEDIATE takes the write lock at BEGIN, so a busy database fails (after busy_timeout) before any work.
      outcomes = this.#runBatch.immediate(batch);
    } catch (error) {
      for (const write of batch) {
        write.reject(error);
      }
      return;
    }
    for (const [index, write] of batch.entries()) {
      const outcome = outcomes[index] as Outcome;
      if ('rows' in outcome) {
        write.resolve(outcome.rows);
      } else {
        write.reject(outcome.error);
      }
    }
  }
}
