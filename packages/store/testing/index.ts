export { migrationProvider } from '../src/migrations/index.js';
export { describeStoreConformance } from '../test/conformance.js';
export { createTestDatabase, type TestDatabase } from './postgres.js';
export { postgresAvailable, TEST_POSTGRES_URL } from './postgres-available.js';
