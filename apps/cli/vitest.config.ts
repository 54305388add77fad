import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/build-cli.ts'],
    // Every test starts the real CLI, as built, as a child process (a few tenths of a second each, more on a busy
    // machine).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
