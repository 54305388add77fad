// Plain JavaScript, like what it re-exports: vitest configs load it natively, before any TypeScript loader.
export { postgresAvailable, TEST_POSTGRES_URL } from '@apikeys/store/testing/postgres-available';
