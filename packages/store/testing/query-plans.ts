import type Database from 'better-sqlite3';
import type pg from 'pg';
import { PIPELINE_SESSION_SETTINGS } from '../src/postgres/open-postgres-store.js';

/** A node of a PostgreSQL `EXPLAIN (FORMAT JSON)` plan, as far as the tests and the measuring script read it. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Filter?: string;
  'Index Cond'?: string;
  /** With `BUFFERS`: the shared buffers (8 KiB pages) found in the cache, this node's children included. */
  'Shared Hit Blocks'?: number;
  /** With `BUFFERS`: the shared buffers read from outside the cache, this node's children included. */
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, the root first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/**
 * The root of a query's plan, with `EXPLAIN (FORMAT JSON, ...options)`, and the execution time if it ran. The plan
 * is the generic one, planned without the parameters' values, with the settings of the store's pipelined statements
 * (`PIPELINE_SESSION_SETTINGS` in open-postgres-store.ts): the plan that runs, not the one the values would get.
 */
export async function explainPostgres(
  client: pg.Client,
  sql: string,
  parameters: readonly unknown[],
  options: readonly string[] = [],
): Promise<{ plan: PlanNode; executionMs?: number }> {
  for (const [name, value] of Object.entries(PIPELINE_SESSION_SETTINGS)) {
    await client.query(`set ${name} = ${value}`);
  }
  await client.query(`prepare explained as ${sql}`);
  try {
    // EXPLAIN takes no bound parameters: the values go into EXECUTE as literals, typed by the prepared statement.
    const literals = parameters.map((value) => (value === null ? 'null' : client.escapeLiteral(String(value))));
    const values = literals.length === 0 ? '' : `(${literals.join(', ')})`;
    const result = await client.query(`explain (${['format json', ...options].join(', ')}) execute explained${values}`);
    const [explained] = (result.rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time'?: number }] })[
      'QUERY PLAN'
    ];
    return {
      plan: explained.Plan,
      ...(explained['Execution Time'] === undefined ? {} : { executionMs: explained['Execution Time'] }),
    };
  } finally {
    await client.query('deallocate explained');
  }
}

/** The steps of a query's SQLite plan (the `detail` column of `EXPLAIN QUERY PLAN`), in order. */
export function explainSqlite(database: Database.Database, sql: string, parameters: readonly unknown[]): string[] {
  const rows = database.prepare(`explain query plan ${sql}`).all(...parameters) as { detail: string }[];
  return rows.map((row) => row.detail);
}
