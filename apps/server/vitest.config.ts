import { postgresAvailable } from '@apikeys/server/testing/postgres-available';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// The whole HTTP suite runs twice: on SQLite, and once more on PostgreSQL when a server is reachable (in CI it must
// be: `postgresAvailable` throws there instead of skipping).
const postgres: TestProjectInlineConfiguration[] = (await postgresAvailable())
  ? [
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/contract/**/*.test.ts', 'test/http/**/*.test.ts'],
          env: { TEST_STORE: 'postgres' },
        },
      },
    ]
  : [];

export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['test/build-server.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [{ extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } }, ...postgres],
  },
});
