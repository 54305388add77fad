import type Database from 'better-sqlite3';
import { nowMicros } from '../time.js';
import { atWriteTime } from '../write-time.js';
import { isLocked, LOCK_RETRY_MS } from './lock-waits.js';
import type { StatementCache } from './statement-cache.js';

/** One statement and its parameters. */
export interface Statement {
  sql: string;
  parameters: unknown[];
}

interface PendingWrite {
  /** Run in order, all or none; the write's rows are those of the last. */
  statements: readonly Statement[];
  /** `performance.now()` after which the write gives up waiting for the lock. */
  deadline: number;
  resolve(rows: unknown[][]): void;
  reject(error: unknown): void;
}

type Outcome = { rows: unknown[][] } | { error: unknown };

/**
 * Group commit for writes on SQLite (a write: a few statements that commit together). With `synchronous = FULL` every
 * commit waits for the disk, and better-sqlite3 waits on the event loop: one update per commit caps a server near 2,000
 * writes/s whatever its CPU. The writes issued during one turn of the event loop (every request that arrived in one
 * poll) are queued and run together at the end of the turn in one transaction, each inside a savepoint of its own, so
 * that one failing write fails alone (unless SQLite rolls the whole transaction back, which fails the batch). Each
 * write's promise settles only after that transaction has committed: a write is acknowledged only once it is durable,
 * and a failed commit fails every write of the batch.
 *
 * When another process holds the write lock, the batch does not wait for it inside SQLite (the connection's
 * busy_timeout is 0: SQLite's busy handler would block the event loop for the whole deadline): it asks for the lock
 * without waiting and tries again every few milliseconds, on timers, while the server goes on serving reads. Each
 * write fails as locked once its own deadline (`lockTimeoutMs` after it was queued) has passed. A batch is one
 * synchronous call, so it cannot use `retryWhileLocked`: the writes queued meanwhile join the next attempt.
 */
export class GroupCommit {
  #pending: PendingWrite[] = [];
  /** Whether a flush is scheduled, at the end of this turn or on a retry timer. */
  #scheduled = false;
  readonly #runBatch: Database.Transaction<(batch: PendingWrite[]) => Outcome[]>;

  /**
   * `statements` prepares each write (in raw mode, so it must return rows). `whileInTransaction` runs a write when
   * another caller's transaction (Kysely's) holds the one connection at the end of the turn: it waits for that
   * transaction to end rather than writing into it, and runs the write's statements in a transaction of its own.
   * `onStatement` hears of each statement run directly.
   */
  constructor(
    private readonly database: Database.Database,
    statements: StatementCache,
    private readonly whileInTransaction: (statements: readonly Statement[]) => Promise<unknown[][]>,
    private readonly lockTimeoutMs: number,
    onStatement?: (sql: string, parameters: readonly unknown[]) => void,
  ) {
    // A transaction function called inside another runs in a savepoint (better-sqlite3's nested transactions).
    const runOne = database.transaction((write: PendingWrite) => {
      let rows: unknown[][] = [];
      // The moment of the write, read as it runs: the batch holds the write lock.
      const now = nowMicros();
      for (const { sql, parameters: given } of write.statements) {
        const parameters = atWriteTime(given, now);
        onStatement?.(sql, parameters);
        const statement = statements.get(sql);
        if (statement.reader) {
          rows = statement.all(...parameters) as unknown[][];
        } else {
          statement.run(...parameters);
          rows = [];
        }
      }
      return rows;
    });
    this.#runBatch = database.transaction((batch: PendingWrite[]) =>
      batch.map((write): Outcome => {
        try {
          return { rows: runOne(write) };
        } catch (error) {
          // SQLite rolls the whole transaction back on some errors (a full disk when a write spills the page cache,
          // an I/O error): the earlier writes are undone, and the later ones must not run outside any transaction.
          // The batch fails with this error, rather than with COMMIT's "no transaction is active".
          if (!database.inTransaction) {
            throw error;
          }
          return { error };
        }
      }),
    );
  }

  /**
   * Queues one write: statements that commit together or not at all. Resolves with the rows (as arrays) of the last
   * one once they have committed.
   */
  write(statements: readonly Statement[]): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ statements, deadline: performance.now() + this.lockTimeoutMs, resolve, reject });
      this.#schedule(() => setImmediate(() => this.#flush()));
    });
  }

  #schedule(start: () => void): void {
    if (!this.#scheduled) {
      this.#scheduled = true;
      start();
    }
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) {
      return;
    }
    if (this.database.inTransaction) {
      for (const write of batch) {
        this.whileInTransaction(write.statements).then(write.resolve, write.reject);
      }
      return;
    }
    let outcomes: Outcome[];
    try {
      // IMMEDIATE takes the write lock at BEGIN, without waiting (busy_timeout 0): a locked database fails here,
      // before any work, and the batch tries again on a timer.
      outcomes = this.#runBatch.immediate(batch);
    } catch (error) {
      this.#failOrRetry(batch, error);
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

  /** A batch that failed: a locked database keeps the writes still inside their deadline queued for a retry. */
  #failOrRetry(batch: PendingWrite[], error: unknown): void {
    const now = performance.now();
    const waiting = isLocked(error) ? batch.filter((write) => write.deadline > now) : [];
    const retried = new Set(waiting);
    for (const write of batch) {
      if (!retried.has(write)) {
        write.reject(error);
      }
    }
    if (waiting.length > 0) {
      // The waiting writes go first: they were queued before any that arrived meanwhile.
      this.#pending = [...waiting, ...this.#pending];
      const nextDeadline = Math.min(...waiting.map((write) => write.deadline));
      this.#schedule(() => setTimeout(() => this.#flush(), Math.max(1, Math.min(LOCK_RETRY_MS, nextDeadline - now))));
    }
  }
}
