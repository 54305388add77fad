interface Waiting<W> {
  write: W;
  /** When it came (`performance.now()`): its deadline runs from then, not from when its batch starts. */
  since: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How writes run: one alone, or several in one transaction, in order, each with its own answer. */
export interface BatchRunner<W> {
  alone(write: W): Promise<unknown>;
  /** Runs `writes` in one transaction whose deadline runs from `since`, when the first of them came. */
  together(writes: readonly W[], since: number): Promise<unknown[]>;
  /** Whether an error is one a statement raised: its transaction was rolled back, and the connection is usable. */
  isStatementError(error: unknown): boolean;
}

/**
 * The writes of one key (on PostgreSQL), in the order they come: while one is in flight, those that come after it wait,
 * and once it is done they run together, in one transaction, which commits them all with one flush of the WAL.
 *
 * Without it, concurrent updates of one key queue on its row lock in the database, and each holds the lock until its
 * own commit is durable: a hot key's updates take one flush each, one after the other, and every waiting backend
 * re-reads the row each time the lock passes on (docs/benchmarks.md, "One hot key on PostgreSQL"). Here the process
 * sends one transaction at a time per key.
 *
 * A write that waited keeps its deadline: its batch has what remains of it, counted from when the write came (the
 * earliest of the batch), so that an unavailable database is answered as fast as for a write sent alone.
 *
 * Each write still gets its own answer. A batch that fails on an error of one of its statements (a constraint, say)
 * is rolled back and each of its writes is run again on its own, so that only the faulty one fails. A batch that fails
 * otherwise (the connection is lost) fails each of its writes with that error: whether it committed is unknown, as for
 * a write sent alone.
 */
export class SameKeyBatches<W> {
  /** The writes waiting for the one in flight, by key; a key is present while a write of it is in flight. */
  readonly #waiting = new Map<string, Waiting<W>[]>();

  constructor(private readonly runner: BatchRunner<W>) {}

  /** Runs `write` of `key`: now, or with the others that came while one was in flight. Resolves with its answer. */
  async write(key: string, write: W): Promise<unknown> {
    const queue = this.#waiting.get(key);
    if (queue) {
      return new Promise((resolve, reject) => {
        queue.push({ write, since: performance.now(), resolve, reject });
      });
    }
    this.#waiting.set(key, []);
    try {
      return await this.runner.alone(write);
    } finally {
      void this.#runWaiting(key);
    }
  }

  /** Runs what waited for `key`'s write, batch after batch, until nothing waits. */
  async #runWaiting(key: string): Promise<void> {
    for (let batch = this.#waiting.get(key) ?? []; batch.length > 0; batch = this.#waiting.get(key) ?? []) {
      this.#waiting.set(key, []);
      await this.#run(batch);
    }
    this.#waiting.delete(key);
  }

  async #run(batch: readonly Waiting<W>[]): Promise<void> {
    const since = Math.min(...batch.map((waiting) => waiting.since));
    let results: unknown[];
    try {
      results = await this.runner.together(
        batch.map(({ write }) => write),
        since,
      );
    } catch (error) {
      if (batch.length === 1 || !this.runner.isStatementError(error)) {
        for (const waiting of batch) {
          waiting.reject(error);
        }
        return;
      }
      for (const waiting of batch) {
        await this.runner.alone(waiting.write).then(waiting.resolve, waiting.reject);
      }
      return;
    }
    batch.forEach((waiting, index) => {
      waiting.resolve(results[index]);
    });
  }
}
