export { postgresAvailable, TEST_POSTGRES_URL } from '@apikeys/store/testing/postgres-available';
