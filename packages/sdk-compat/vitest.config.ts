import { engineProjects } from '@apikeys/store/testing/engines';
import { defineConfig } from 'vitest/config';

// Every test runs once per engine of the run (`testEngines`): on SQLite, and once more on PostgreSQL when a server is
// reachable (in CI it must be: `postgresAvailable` throws there instead of skipping).

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The SDK adds the headers of ANTHROPIC_CUSTOM_HEADERS to every request and reads a credential from
    // ANTHROPIC_API_KEY when none is passed: a developer's own settings must not change what these tests send.
    env: { ANTHROPIC_CUSTOM_HEADERS: '', ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '', ANTHROPIC_BASE_URL: '' },
    projects: await engineProjects(),
  },
});
