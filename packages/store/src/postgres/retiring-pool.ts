import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { ConnectionLostError, DeadlineError } from './client-errors.js';
import type { PoolUsage } from './query-pipeline.js';
import { isStatementError } from './statement-errors.js';

/** A connection lent by the pool: Kysely's interface, which `insertApiKeyRows` uses as well. */
export interface LentConnection {
  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  release(): void;
}

/** The message of an error, or what it is when it has none (a refused connection may have only a code). */
function describe(error: unknown): string {
  if (error instanceof Error) {
    return error.message || (error as NodeJS.ErrnoException).code || error.name;
  }
  return String(error);
}

/**
 * A pg pool, as Kysely takes it, that never lends out a broken connection again, and that bounds each call by its
 * deadlines with its own timers.
 *
 * A statement not answered within the deadline fails with a DeadlineError, and one that failed because its connection
 * ended or failed with a ConnectionLostError; a connection not lent within the deadline (none free, or a server that
 * does not answer) fails the call with a DeadlineError. The store's own errors say what happened by their class: pg's
 * and pg-pool's timeouts say it only in their wording. (pg-pool's `connectionTimeoutMillis` still ends a connection
 * attempt that hangs, after this pool's timer has failed the call.)
 *
 * A connection whose statement failed for any reason but a statement error of the server's (a deadline, a broken
 * socket, a FATAL error) may still have that statement running on the server, and its answer still come: it fails its
 * later statements at once with the same error, so that Kysely's rollback does not wait for another deadline, and is
 * destroyed on release instead of going back to the pool. And while a connection is lent, pg-pool listens for none of
 * its 'error' events, so a server that drops it (a restart, a terminated backend) would crash the process with an
 * unhandled 'error' event: this pool listens.
 */
export class RetiringPool implements PostgresPool {
  #ended: Promise<void> | undefined;

  /**
   * `connectMs` bounds the wait for a connection; `statementMs`, when given, each statement (migrations and seeding
   * have none: an index build on a million rows takes longer, and must not be cancelled halfway).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly deadlines: { connectMs: number; statementMs?: number | undefined },
  ) {}

  async connect(): Promise<PostgresPoolClient & LentConnection> {
    const client = await this.#lend();
    let broken: Error | undefined;
    let lost = false;
    const onError = (error: Error) => {
      lost = true;
      broken ??=
        error instanceof pg.DatabaseError
          ? error
          : new ConnectionLostError(`the connection to the database was lost: ${describe(error)}`, {
              statementSent: false,
              cause: error,
            });
    };
    const onEnd = () => {
      lost = true;
    };
    client.on('error', onError);
    client.on('end', onEnd);
    const query = async (sql: string, parameters: readonly unknown[]) => {
      if (broken) {
        throw broken;
      }
      const sent = client.query(sql, [...parameters]);
      const { statementMs } = this.deadlines;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        if (statementMs !== undefined) {
          timer = setTimeout(() => {
            reject(new DeadlineError(`the database did not answer within ${statementMs} ms`, { statementSent: true }));
          }, statementMs);
        }
      });
      try {
        return await Promise.race([sent, late]);
      } catch (error) {
        if (isStatementError(error)) {
          throw error;
        }
        const failure =
          lost && !(error instanceof pg.DatabaseError || error instanceof DeadlineError)
            ? new ConnectionLostError(`the connection to the database was lost: ${describe(error)}`, {
                statementSent: true,
                cause: error,
              })
            : error;
        broken ??= failure instanceof Error ? failure : new Error(String(failure));
        throw failure;
      } finally {
        clearTimeout(timer);
        // A statement that missed its deadline settles when its connection is destroyed, on release.
        sent.catch(() => {});
      }
    };
    return {
      // Kysely passes a cursor only to a dialect configured with one (streaming); this store configures none.
      query: query as unknown as PostgresPoolClient['query'] & LentConnection['query'],
      release: () => {
        client.off('error', onError);
        client.off('end', onEnd);
        // pg-pool destroys a connection released with an error.
        client.release(broken);
      },
    };
  }

  /** A connection from the pool within the deadline; one lent too late goes back to the pool. */
  async #lend(): Promise<pg.PoolClient> {
    // Set before pg-pool's own timeout (`connectionTimeoutMillis`, the same), so that it fires first.
    const { connectMs } = this.deadlines;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new DeadlineError(`no connection to the database within ${connectMs} ms`, { statementSent: false }));
      }, connectMs);
    });
    const lent = this.pool.connect();
    try {
      return await Promise.race([lent, late]);
    } catch (error) {
      if (error instanceof DeadlineError) {
        lent.then(
          (client) => client.release(),
          () => {},
        );
        throw error;
      }
      if (error instanceof pg.DatabaseError) {
        throw error;
      }
      throw new ConnectionLostError(`cannot connect to the database: ${describe(error)}`, {
        statementSent: false,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
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
