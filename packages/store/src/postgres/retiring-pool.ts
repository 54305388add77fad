import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import type { PoolUsage } from './query-pipeline.js';
import { isStatementError } from './statement-errors.js';

/** A connection lent by the pool: Kysely's interface, which `insertApiKeyRows` uses as well. */
export interface LentConnection {
  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  release(): void;
}

/**
 * A pg pool, as Kysely takes it, that never lends out a broken connection again.
 *
 * pg-pool takes a connection back as healthy after a statement on it missed its client-side deadline
 * (`query_timeout`), though that statement may still run on the server and its answer still come: the next borrower
 * would wait behind it, and where a rollback was dropped unsent, run inside a transaction left open. And while a
 * connection is lent, pg-pool listens for none of its 'error' events, so a server that drops it (a restart, a
 * terminated backend) would crash the process with an unhandled 'error' event.
 *
 * Here a connection whose statement failed for any reason but a statement error of the server's (a deadline, a broken
 * socket, a FATAL error) fails its later statements at once with the same error, so that Kysely's rollback does not
 * wait for another deadline, and is destroyed on release instead of going back to the pool.
 */
export class RetiringPool implements PostgresPool {
  #ended: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  async connect(): Promise<PostgresPoolClient & LentConnection> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    const query = async (sql: string, parameters: readonly unknown[]) => {
      if (broken) {
        throw broken;
      }
      try {
        return await client.query(sql, [...parameters]);
      } catch (error) {
        if (!isStatementError(error)) {
          broken ??= error instanceof Error ? error : new Error(String(error));
        }
        throw error;
      }
    };
    return {
      // Kysely passes a cursor only to a dialect configured with one (streaming); this store configures none.
      query: query as unknown as PostgresPoolClient['query'] & LentConnection['query'],
      release: () => {
        client.off('error', onError);
        // pg-pool destroys a connection released with an error.
        client.release(broken);
      },
    };
  }

  /** Connections open or opening, those not idle (lent out or connecting), and the callers waiting for one. */
  stats(): PoolUsage {
    return {
      size: this.pool.totalCount,
      inUse: this.pool.totalCount - this.pool.idleCount,
      waiting: this.pool.waitingCount,
    };
  }

  /** Ends the pool once: a second call (Kysely's destroy(), then the pool's owner) waits for the same end. */
  end(): Promise<void> {
    this.#ended ??= this.pool.end();
    return this.#ended;
  }
}
