import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_ORGANIZATION, openMigratedStore, type Store } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { databaseUrl, explainPostgres, explainSqlite, onPostgres, planNodes } from '@apikeys/store/testing';
import Database from 'better-sqlite3';
import pg from 'pg';

export type Engine = 'sqlite' | 'postgres';

/** Buffers read and µs spent by the PostgreSQL server for a query. */
export interface ServerWork {
  buffers: number;
  micros: number;
}

/** A query as the store ran it. */
export interface RunQuery {
  sql: string;
  parameters: readonly unknown[];
}

/** One freshly seeded database of one engine and size, on the latest migration. */
export interface MeasuredDatabase {
  store: Store;
  seedSeconds: number;
  /** Cursor IDs sampled uniformly over the collection, in random order. */
  cursorIds: string[];
  /**
   * The queries the store ran since this list was last emptied, for EXPLAIN; kept short, as the timed calls land
   * here too.
   */
  queriesRun: RunQuery[];
  /** The plan of a query, reduced to the index (or indexes) it reads. */
  indexOf(query: RunQuery): Promise<string>;
  /**
   * What the server does for a query, by EXPLAIN (ANALYZE, BUFFERS): the buffers (8 KiB pages) it reads, hit or
   * not, and its execution time in µs. PostgreSQL only.
   */
  explain?(query: RunQuery): Promise<ServerWork>;
  drop(): Promise<void>;
}

/** Where the databases go: SQLite files in `dir`, PostgreSQL databases on the server of `postgresUrl`. */
export interface DatabasePlaces {
  dir: string;
  postgresUrl: string;
  /** Cursor IDs to sample. */
  samples: number;
}

const ORGANIZATION_ID = DEFAULT_ORGANIZATION.id;
const SAMPLE_SQL = 'select id from api_keys where organization_id = $1 order by random() limit $2';
const QUERIES_KEPT = 10;

/** Records the first queries the store runs into `queriesRun`. */
function queryRecorder(queriesRun: RunQuery[]) {
  return (sql: string, parameters: readonly unknown[]) => {
    if (queriesRun.length < QUERIES_KEPT) {
      queriesRun.push({ sql, parameters });
    }
  };
}

/** Seeds the default organization with `size` keys, as the benchmark suite does; returns the seconds it took. */
async function timeSeed(store: Store, size: number): Promise<number> {
  const started = performance.now();
  await seedApiKeys(store, {
    organizationId: ORGANIZATION_ID,
    count: size,
    workspaces: 3,
    users: 5,
    seed: 1,
    lifecycle: true,
  });
  return (performance.now() - started) / 1000;
}

async function openSqlite(size: number, places: DatabasePlaces): Promise<MeasuredDatabase> {
  const path = join(places.dir, `latest-${size}.sqlite`);
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm']) {
      rmSync(`${path}${suffix}`, { force: true });
    }
  };
  remove();
  const queriesRun: RunQuery[] = [];
  const { store } = await openMigratedStore({ kind: 'sqlite', path }, { onQuery: queryRecorder(queriesRun) });
  const seedSeconds = await timeSeed(store, size);
  const side = new Database(path);
  const cursorIds = side
    .prepare(SAMPLE_SQL.replace('$1', '?').replace('$2', '?'))
    .pluck()
    .all(ORGANIZATION_ID, places.samples) as string[];
  return {
    store,
    seedSeconds,
    cursorIds,
    queriesRun,
    async indexOf({ sql, parameters }) {
      return explainSqlite(side, sql, parameters)
        .map((step) => step.replace(/^SEARCH api_keys USING (COVERING )?INDEX /, ''))
        .join('; ');
    },
    async drop() {
      side.close();
      await store.close();
      remove();
    },
  };
}

async function openPostgres(size: number, places: DatabasePlaces): Promise<MeasuredDatabase> {
  const database = `apikeys_idx_measure_${size}`;
  const onServer = (sql: string) => onPostgres(places.postgresUrl, (client) => client.query(sql));
  await onServer(`drop database if exists ${database} with (force)`);
  await onServer(`create database ${database}`);
  const url = databaseUrl(places.postgresUrl, database);
  const queriesRun: RunQuery[] = [];
  const { store } = await openMigratedStore(
    { kind: 'postgres', url },
    { onQuery: queryRecorder(queriesRun), poolSize: 1 },
  );
  const seedSeconds = await timeSeed(store, size);
  const side = new pg.Client({ connectionString: url });
  await side.connect();
  // What autovacuum would have done by the time anyone lists; without statistics the plans are guesses.
  await side.query('vacuum analyze api_keys');
  const sampled = await side.query<{ id: string }>(SAMPLE_SQL, [ORGANIZATION_ID, places.samples]);
  return {
    store,
    seedSeconds,
    cursorIds: sampled.rows.map((row) => row.id),
    queriesRun,
    async indexOf({ sql, parameters }) {
      const { plan } = await explainPostgres(side, sql, parameters);
      return planNodes(plan)
        .map((node) =>
          node['Index Name']
            ? `${node['Node Type']} ${node['Index Name']}${node.Filter ? ` filter ${node.Filter}` : ''}`
            : node['Node Type'],
        )
        .join(' > ');
    },
    async explain({ sql, parameters }) {
      const { plan, executionMs = Number.NaN } = await explainPostgres(side, sql, parameters, ['analyze', 'buffers']);
      return {
        buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
        micros: executionMs * 1000,
      };
    },
    async drop() {
      await side.end();
      await store.close();
      await onServer(`drop database if exists ${database} with (force)`);
    },
  };
}

/** Creates, migrates and seeds a database of `size` keys. */
export function openMeasuredDatabase(engine: Engine, size: number, places: DatabasePlaces): Promise<MeasuredDatabase> {
  return engine === 'sqlite' ? openSqlite(size, places) : openPostgres(size, places);
}
