import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiKey } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import { databaseUrl, onPostgres } from '@apikeys/server/testing';
import { DEFAULT_ORGANIZATION, openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import Database from 'better-sqlite3';

/** Engines the suite runs the server on. */
export type Engine = 'sqlite' | 'postgres';

/** A seeded database, ready for a server to open. */
export interface SeededDatabase {
  engine: Engine;
  keys: number;
  databaseUrl: string;
  /** The secret of an admin key of the default organization, for `x-api-key`. */
  adminSecret: string;
  /** Wall-clock seconds `seedApiKeys` took. */
  seedSeconds: number;
  /** API key IDs sampled uniformly over the whole collection, in random order: cursors and keys to read or update. */
  sampleIds: string[];
  /** The first 1000 keys as the API lists them, for the references to serve. */
  firstItems: ApiKey[];
  /** Deletes the database. */
  drop(): Promise<void>;
}

/** The database the suite creates on the PostgreSQL server for `keys` keys, and drops afterwards. */
export function postgresBenchDatabase(keys: number): string {
  return `apikeys_bench_${keys}`;
}

const SAMPLE_SIZE = 2000;
const SAMPLE_SQL = 'select id from api_keys where organization_id = $1 order by random() limit $2';

/** Whether a PostgreSQL server answers at `serverUrl`; the reason when it does not. */
export async function postgresReachable(serverUrl: string): Promise<true | string> {
  try {
    await onPostgres(serverUrl, (client) => client.query('select 1'));
    return true;
  } catch (error) {
    return error instanceof Error ? error.message || String((error as NodeJS.ErrnoException).code) : String(error);
  }
}

/** Seeds `keys` keys through the store, as `apikeys keys seed` does, and samples IDs for the scenarios. */
async function seed(
  engine: Engine,
  databaseUrl: string,
  keys: number,
  sample: () => Promise<string[]>,
): Promise<Omit<SeededDatabase, 'drop'>> {
  const { store } = await openMigratedStore(parseDatabaseUrl(databaseUrl));
  try {
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { secret } = await store.createAdminKey({ organizationId, name: 'bench' });
    const started = performance.now();
    await store.seedApiKeys({ organizationId, count: keys, workspaces: 3, users: 5, seed: 1, lifecycle: true });
    const seedSeconds = (performance.now() - started) / 1000;
    const page = await store.listApiKeys({ organizationId, limit: 1000 });
    if (page.kind !== 'page') {
      throw new Error('a list without a cursor found no page');
    }
    return {
      engine,
      keys,
      databaseUrl,
      adminSecret: secret,
      seedSeconds,
      sampleIds: await sample(),
      firstItems: page.keys.map(toApiKeyJson),
    };
  } finally {
    await store.close();
  }
}

/** Creates and seeds a fresh SQLite file in `dir`. */
export async function seedSqlite(dir: string, keys: number): Promise<SeededDatabase> {
  const path = join(dir, `bench-${keys}.sqlite`);
  const drop = async () => {
    for (const suffix of ['', '-wal', '-shm']) {
      rmSync(`${path}${suffix}`, { force: true });
    }
  };
  await drop();
  const sample = async () => {
    const db = new Database(path, { readonly: true });
    try {
      const rows = db
        .prepare(SAMPLE_SQL.replace('$1', '?').replace('$2', '?'))
        .all(DEFAULT_ORGANIZATION.id, SAMPLE_SIZE);
      return (rows as { id: string }[]).map((row) => row.id);
    } finally {
      db.close();
    }
  };
  return { ...(await seed('sqlite', `file:${path}`, keys, sample)), drop };
}

/**
 * Creates a bench database of its own for `keys` keys on the PostgreSQL server (dropping a leftover one), seeds it,
 * and runs VACUUM ANALYZE, as autovacuum would soon after a bulk load: the table is then as it would be in steady
 * state, with statistics for the planner and every row's commit status recorded on its page, instead of the first
 * scenarios paying for that on each page they read. (Not part of the seed time.)
 */
export async function seedPostgres(serverUrl: string, keys: number): Promise<SeededDatabase> {
  const name = postgresBenchDatabase(keys);
  const drop = () => onPostgres(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
  await drop();
  await onPostgres(serverUrl, (client) => client.query(`create database ${name}`));
  const url = databaseUrl(serverUrl, name);
  const sample = () =>
    onPostgres(url, async (client) => {
      await client.query('vacuum analyze');
      const result = await client.query<{ id: string }>(SAMPLE_SQL, [DEFAULT_ORGANIZATION.id, SAMPLE_SIZE]);
      return result.rows.map((row) => row.id);
    });
  return { ...(await seed('postgres', url, keys, sample)), drop: async () => void (await drop()) };
}
