import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../src/open-store.js';
import { openSqliteStore, SQLITE_MEMORY } from '../src/sqlite/open-sqlite-store.js';
import type { TestEngine } from '../testing/engines.js';
import { createTestDatabase, onPostgres } from '../testing/postgres.js';
import { CONFORMANCE_ROWS_PER_COMMIT, type StoreFactory, type StoreUnderTest } from './conformance.js';

/** The connections per pool of the PostgreSQL stores under test. */
export const POSTGRES_POOL_SIZE = 4;

/** A path for a SQLite file in a new temporary directory, and how to remove the directory. */
export async function tempDatabasePath(): Promise<{ path: string; removeDir: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'apikeys-store-test-'));
  return { path: join(dir, 'api-keys.sqlite'), removeDir: () => rm(dir, { recursive: true, force: true }) };
}

/** A store on a new temporary file; equal timestamps are written through a second connection to the same file. */
export async function openTempFileStore(): Promise<StoreUnderTest> {
  const { path, removeDir } = await tempDatabasePath();
  let side: Database.Database | undefined;
  return {
    ...openSqliteStore(path, { bulkLoadRowsPerCommit: CONFORMANCE_ROWS_PER_COMMIT }),
    async setCreatedAt(apiKeyIds, micros) {
      side ??= new Database(path);
      const update = side.prepare('update api_keys set created_at = ? where id = ?');
      const changed = side.transaction(() => apiKeyIds.reduce((sum, id) => sum + update.run(micros, id).changes, 0))();
      if (changed !== apiKeyIds.length) {
        throw new Error(`setCreatedAt changed ${changed} of ${apiKeyIds.length} keys`);
      }
    },
    async cleanup() {
      side?.close();
      await removeDir();
    },
  };
}

/** A store on a database of its own; `setCreatedAt` writes through a connection of its own to create ties. */
export async function postgresStore(options: Parameters<typeof openStore>[1] = {}): Promise<StoreUnderTest> {
  const database = await createTestDatabase();
  const opened = await openStore(
    { kind: 'postgres', url: database.url },
    { poolSize: POSTGRES_POOL_SIZE, bulkLoadRowsPerCommit: CONFORMANCE_ROWS_PER_COMMIT, ...options },
  );
  return {
    ...opened,
    async setCreatedAt(apiKeyIds, micros) {
      const result = await onPostgres(database.url, (client) =>
        client.query('update api_keys set created_at = $1 where id = any($2::text[])', [micros, apiKeyIds]),
      );
      if (result.rowCount !== apiKeyIds.length) {
        throw new Error(`setCreatedAt changed ${result.rowCount} of ${apiKeyIds.length} keys`);
      }
    },
    cleanup: () => database.drop(),
  };
}

/** A kind of store the conformance suite runs on, with the options of `describeStoreConformance`. */
interface ConformanceSubject {
  name: string;
  open: StoreFactory;
  equalTimestamps: boolean;
  poolSize?: number;
}

/**
 * The stores of each engine that the conformance suite runs on. SQLite runs in memory and on a file; only the file
 * runs the tests of equal created_at, written straight into it.
 */
export const CONFORMANCE_SUBJECTS: Record<TestEngine['kind'], readonly ConformanceSubject[]> = {
  sqlite: [
    {
      name: 'SQLite in memory',
      open: async () => openSqliteStore(SQLITE_MEMORY, { bulkLoadRowsPerCommit: CONFORMANCE_ROWS_PER_COMMIT }),
      equalTimestamps: false,
    },
    { name: 'SQLite file', open: openTempFileStore, equalTimestamps: true },
  ],
  postgres: [{ name: 'PostgreSQL', open: () => postgresStore(), equalTimestamps: true, poolSize: POSTGRES_POOL_SIZE }],
};
