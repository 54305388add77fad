import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { CommitTrackingDialect } from '../commit-tracking-dialect.js';
import type { CompiledWrite } from '../core/dialect-adapter.js';
import { KyselyMigrator } from '../core/migrator.js';
import { KEY_CHANGES_CHANNEL, keyChangePayload } from '../key-changes.js';
import { kyselyStore } from '../kysely-store.js';
import { randomHex } from '../random.js';
import {
  type ApiKeysTable,
  type AuditEventsTable,
  type BulkTable,
  bulkColumns,
  type DatabaseSchema,
} from '../schema.js';
import {
  DEFAULT_BULK_LOAD_ROWS_PER_COMMIT,
  DEFAULT_TIMEOUT_MS,
  queryLog,
  type StoreOptions,
} from '../store-options.js';
import type { OpenedStore } from '../types.js';
import { classifyingUnavailable } from '../unavailable.js';
import { classifyPostgresError } from './classify-errors.js';
import { connectDeadline, serverStatementDeadline } from './connection-deadlines.js';
import { NOTIFY_KEY_CHANGE, watchNotifications } from './key-change-notifications.js';
import { QueryPipeline } from './query-pipeline.js';
import { RetiringPool } from './retiring-pool.js';
import { isStatementError } from './statement-errors.js';

/** Connections in the pool when the operator does not choose. */
export const DEFAULT_POOL_SIZE = 10;

const INT8_OID = 20;

// Timestamps are bigint microseconds, far below 2^53, so they convert to numbers exactly. This parser is set on
// this pool only, never globally on the pg module.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

// The PostgreSQL type of every column of the bulk-filled tables, keyed by the table types so that a new column fails
// compilation here.
const API_KEY_COLUMN_TYPES: Record<keyof ApiKeysTable, string> = {
  id: 'text',
  organization_id: 'text',
  name: 'text',
  workspace_id: 'text',
  created_at: 'int8',
  created_by_id: 'text',
  created_by_type: 'text',
  partial_key_hint: 'text',
  secret_hash: 'text',
  status: 'text',
  updated_at: 'int8',
  expires_at: 'int8',
  principal_type: 'text',
  principal_id: 'text',
  scope: 'text',
  permissions: 'text',
  metadata: 'text',
};

const AUDIT_EVENT_COLUMN_TYPES: Record<keyof AuditEventsTable, string> = {
  organization_id: 'text',
  id: 'text',
  occurred_at: 'int8',
  type: 'text',
  actor_type: 'text',
  actor_id: 'text',
  actor_name: 'text',
  target_type: 'text',
  target_id: 'text',
  name_before: 'text',
  name_after: 'text',
  status_before: 'text',
  status_after: 'text',
  expires_at_before: 'int8',
  expires_at_after: 'int8',
  related_type: 'text',
  related_id: 'text',
  key_count: 'int8',
  request_id: 'text',
  client_ip: 'text',
  client_user_agent: 'text',
  permissions_before: 'text',
  permissions_after: 'text',
  metadata_before: 'text',
  metadata_after: 'text',
};

/**
 * The statement that inserts a whole chunk of rows into `table`: each column travels as one array parameter and
 * unnest() zips them into rows.
 */
function bulkInsertSql(table: BulkTable): string {
  const types: Record<string, string> = table === 'api_keys' ? API_KEY_COLUMN_TYPES : AUDIT_EVENT_COLUMN_TYPES;
  const columns = bulkColumns(table);
  const arrays = columns.map((column, i) => `$${i + 1}::${types[column]}[]`);
  return `insert into ${table} (${columns.join(', ')}) select * from unnest(${arrays.join(', ')})`;
}

/**
 * The name of a prepared statement: derived from its SQL, so that a name means the same statement in every process. A
 * pooler that hands one server connection to several replicas (PgBouncer before 1.21 in transaction mode) could
 * otherwise run one process's statement under another's name: a wrong answer rather than an error.
 */
export function statementName(sql: string): string {
  return `apikeys_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
}

/**
 * The planner settings of the pipeline's sessions. Each prepared statement is planned once, without its parameters'
 * values (`plan_cache_mode`). Such a plan costs `limit $n` for a tenth of the table, which can make a page of 20 keys
 * look expensive: enough for PostgreSQL to start parallel workers or compile the query (JIT), tens of milliseconds
 * each, for a statement that reads a few rows by index. Neither ever pays for itself on a request's statements.
 */
export const PIPELINE_SESSION_SETTINGS = {
  plan_cache_mode: 'force_generic_plan',
  jit: 'off',
  max_parallel_workers_per_gather: '0',
} as const;

/**
 * The configuration of the pipeline's connections: the statements' own, and `PIPELINE_SESSION_SETTINGS` (an `options`
 * parameter in the database URL replaces them).
 */
export function pipelineClientConfig(statements: pg.ClientConfig): pg.ClientConfig {
  const options = Object.entries(PIPELINE_SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`);
  return { ...statements, options: options.join(' ') };
}

/** The statement of a write: on PostgreSQL one statement makes several changes (a data-modifying WITH). */
function onlyStatement(statements: CompiledWrite): CompiledWrite[number] {
  const [statement, ...more] = statements;
  if (!statement || more.length > 0) {
    throw new TypeError('a write on PostgreSQL is one statement: a data-modifying WITH for several changes');
  }
  return statement;
}

/**
 * A pg pool whose idle connections may break (a server restart, say) without crashing the process, with the
 * deadlines of RetiringPool.
 */
function openPool(config: pg.PoolConfig, deadlines: ConstructorParameters<typeof RetiringPool>[1]): RetiringPool {
  const pool = new pg.Pool(config);
  // An idle connection that breaks is dropped by the pool and replaced on the next query; without a listener the
  // 'error' event would crash the process.
  pool.on('error', () => {});
  return new RetiringPool(pool, deadlines);
}

/**
 * Opens a PostgreSQL store. The statements of requests (authentication, list, retrieve, update) go through a query
 * pipeline of up to `poolSize` connections; transactions and the other Store calls through a pool of as many, and
 * migrations and seeding through another pool of as many. The pools open connections only when used and close those
 * left idle.
 *
 * Every call has the deadline `timeoutMs`: connecting, waiting for a pooled connection, and each statement, on the
 * server (`statement_timeout`) and on the client (the store's own timers), since a frozen server never answers.
 * Migrations and seeding have it for connecting only: an index build on a million rows takes longer, and must not be
 * cancelled halfway through a deployment.
 */
export function openPostgresStore(url: string, options: StoreOptions = {}): OpenedStore {
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  const rowsPerCommit = options.bulkLoadRowsPerCommit ?? DEFAULT_BULK_LOAD_ROWS_PER_COMMIT;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connecting: pg.ClientConfig = { connectionString: url, types, ...connectDeadline(timeoutMs) };
  const statements: pg.ClientConfig = { ...connecting, ...serverStatementDeadline(timeoutMs) };
  const pool = openPool({ ...statements, max: poolSize }, { connectMs: timeoutMs, statementMs: timeoutMs });
  const maintenancePool = openPool({ ...connecting, max: poolSize }, { connectMs: timeoutMs });
  // The pipeline times each statement itself, for what remains of the deadline once connected. Its
  // statements are prepared, and planned once per connection without their parameters' values: left to choose,
  // PostgreSQL planned every execution anew once a table was large (the generic plan of `limit $n` is costed for a
  // tenth of the table), which doubled the time of an audit page at a million events. Every statement is written
  // so that its generic plan reads an index in page order; the plan tests check the generic plans.
  const pipeline = new QueryPipeline(pipelineClientConfig(statements), poolSize, timeoutMs);
  const db = new Kysely<DatabaseSchema>({
    dialect: new CommitTrackingDialect(new PostgresDialect({ pool })),
    ...queryLog(options.onQuery),
  });
  const maintenanceDb = new Kysely<DatabaseSchema>({
    dialect: new PostgresDialect({ pool: maintenancePool }),
    ...queryLog(options.onQuery),
  });
  // Each prepared query's SQL gets a statement name, so that every connection parses and plans it once.
  const statementNames = new Map<string, string>();
  const namedStatement = (sql: string): string => {
    let name = statementNames.get(sql);
    if (!name) {
      name = statementName(sql);
      statementNames.set(sql, name);
    }
    return name;
  };
  const queryRows = async (sql: string, parameters: unknown[]): Promise<unknown[][]> => {
    options.onQuery?.(sql, parameters);
    return pipeline.query({ name: namedStatement(sql), text: sql, values: parameters });
  };

  // The notifications not yet sent: a process that closes the store right after a change (the operator CLI) still
  // tells the others of it.
  const announcing = new Set<Promise<unknown>>();
  // Names this store in its notifications, so that its own watchers, which heard its changes as they committed, skip
  // them when they come back.
  const origin = randomHex(8);

  const store = kyselyStore(db, {
    queryRows,
    // Each write is one statement that commits on its own; PostgreSQL shares one WAL flush among the commits of all
    // its connections.
    writeRows: async (statements) => {
      const statement = onlyStatement(statements);
      return queryRows(statement.sql, statement.parameters);
    },
    writeRowsTogether: async (writes, since) =>
      pipeline.transaction(
        writes.map(onlyStatement).map(({ sql, parameters }) => {
          options.onQuery?.(sql, parameters);
          return { name: namedStatement(sql), text: sql, values: parameters };
        }),
        since,
      ),
    // One connection inserts chunk after chunk and commits every `rowsPerCommit` rows.
    insertRows: async (table, chunks) => {
      const insert = bulkInsertSql(table);
      const columns = bulkColumns(table);
      const client = await maintenancePool.connect();
      let inserted = 0;
      try {
        await client.query('begin', []);
        let uncommitted = 0;
        for (const rows of chunks) {
          await client.query(
            insert,
            columns.map((column) => rows.map((row) => (row as unknown as Record<string, unknown>)[column])),
          );
          inserted += rows.length;
          uncommitted += rows.length;
          if (uncommitted >= rowsPerCommit) {
            await client.query('commit', []);
            await client.query('begin', []);
            uncommitted = 0;
          }
        }
        await client.query('commit', []);
      } catch (error) {
        await client.query('rollback', []).catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      return inserted;
    },
    announceKeyChange: async (change) => {
      const sent = queryRows(NOTIFY_KEY_CHANGE, [KEY_CHANGES_CHANNEL, keyChangePayload(change, origin)]);
      announcing.add(sent);
      try {
        await sent;
      } finally {
        announcing.delete(sent);
      }
    },
    watchKeyChanges: (listener) => watchNotifications(url, timeoutMs, origin, listener),
    isStatementError,
    poolStats: () => [
      { pool: 'pipeline', ...pipeline.stats() },
      { pool: 'transactions', ...pool.stats() },
      { pool: 'maintenance', ...maintenancePool.stats() },
    ],
    // Kysely's destroy() ends the request pool; the maintenance pool may have been used without its Kysely.
    close: async () => {
      await Promise.allSettled(announcing);
      await Promise.all([pipeline.close(), maintenancePool.end()]);
    },
  });
  return {
    store: classifyingUnavailable(store, classifyPostgresError),
    migrator: new KyselyMigrator(maintenanceDb),
  };
}
