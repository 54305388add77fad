import { engineProjects } from '@apikeys/store/testing/engines';
import { defineConfig } from 'vitest/config';

// The whole HTTP suite runs once per engine of the run (`testEngines`): on SQLite, and once more on PostgreSQL when a
// server is reachable (in CI it must be: `postgresAvailable` throws there instead of skipping). The other tests open
// the databases they need themselves, so they run once.
const HTTP_SUITE = ['test/contract/**/*.test.ts', 'test/http/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['test/build-server.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: await engineProjects((engine) => (engine.kind === 'sqlite' ? ['test/**/*.test.ts'] : HTTP_SUITE)),
  },
});
