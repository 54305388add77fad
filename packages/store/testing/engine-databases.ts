import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestEngine } from './engines.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';

/**
 * An empty database of its own on `engine`, for one test file: a SQLite file in a new temporary directory, or a new
 * database on the PostgreSQL test server. Its URL is one `DATABASE_URL` takes; `drop` deletes it.
 */
export async function createEngineDatabase(engine: TestEngine): Promise<TestDatabase> {
  if (engine.kind === 'postgres') {
    return createTestDatabase();
  }
  const dir = await mkdtemp(join(tmpdir(), 'apikeys-test-'));
  return {
    url: `file:${join(dir, 'api-keys.sqlite')}`,
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}
