import type { KyselyConfig, LogEvent } from 'kysely';

/** Options every dialect accepts. */
export interface StoreOptions {
  /** Called with the SQL and parameters of every query the store runs, e.g. to check query plans in tests. */
  onQuery?: ((sql: string, parameters: readonly unknown[]) => void) | undefined;
  /** Connections in the pool (PostgreSQL; SQLite has one connection). */
  poolSize?: number | undefined;
  /**
   * The deadline of every call, in milliseconds: connecting, waiting for a connection, each statement (PostgreSQL),
   * waiting for a lock another connection holds (SQLite, on timers). Past it the call fails with a
   * DatabaseUnavailableError. Default: `DEFAULT_TIMEOUT_MS`.
   */
  timeoutMs?: number | undefined;
  /** Rows per transaction of `seedApiKeys` (default: `DEFAULT_BULK_LOAD_ROWS_PER_COMMIT`). */
  bulkLoadRowsPerCommit?: number | undefined;
}

/** The deadline of a store call unless the caller sets one. */
export const DEFAULT_TIMEOUT_MS = 5000;

/** Rows per transaction of a bulk load, on every engine (docs/benchmarks.md, "Seeding"). */
export const DEFAULT_BULK_LOAD_ROWS_PER_COMMIT = 200_000;

/** The Kysely `log` option that reports each query to `onQuery`, or nothing when there is no listener. */
export function queryLog(onQuery: StoreOptions['onQuery']): Pick<KyselyConfig, 'log'> {
  if (!onQuery) {
    return {};
  }
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') {
        onQuery(event.query.sql, event.query.parameters);
      }
    },
  };
}
