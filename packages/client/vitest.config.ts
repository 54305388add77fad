import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/build-server.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
