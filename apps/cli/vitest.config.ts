import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Every test starts the real CLI as a child process (about half a second each, more on a busy machine).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
