import { migrationProvider } from '../src/migrations/index.js';

// Every list query shape, with the index it should read: the store's plan tests check them, the bench times them.
export { CURSOR_SHAPES, FILTER_SHAPES, ROW_CHECKED_STATUS_SHAPES } from '../test/list-query-shapes.js';
export { createEngineDatabase } from './engine-databases.js';
export { engineProjects, POSTGRES, projectEngine, SQLITE, type TestEngine, testEngines } from './engines.js';
export { createTestKey, TEST_KEY_CREATOR, type TestKeyFields } from './keys.js';
export { createTestDatabase, databaseUrl, onPostgres, type TestDatabase } from './postgres.js';
export { postgresAvailable, TEST_POSTGRES_URL } from './postgres-available.js';
export { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from './private-postgres.js';
export { explainPostgres, explainSqlite, type PlanNode, planNodes } from './query-plans.js';
export { type HeldWrite, SqliteLockHolder } from './sqlite-lock-holder.js';

/** The names of every migration, in the order they apply. */
export async function migrationNames(): Promise<string[]> {
  return Object.keys(await migrationProvider.getMigrations()).sort();
}
