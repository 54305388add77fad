// Plain JavaScript on purpose: vitest configs load it natively, before any TypeScript loader is in place.
import pg from 'pg';

/** The server the PostgreSQL tests use: TEST_DATABASE_URL, or the local default of the development machines. */
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Whether the PostgreSQL tests can run here. In CI they must: an unreachable server is an error there, never a
 * reason to skip. Elsewhere (a laptop without PostgreSQL) the tests are left out with a note on stderr.
 */
export async function postgresAvailable() {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if (process.env.CI) {
      throw new Error(`CI requires PostgreSQL at ${TEST_POSTGRES_URL}: ${error.message}`);
    }
    process.stderr.write(
      `PostgreSQL not reachable at ${TEST_POSTGRES_URL}: leaving out its tests (set TEST_DATABASE_URL)\n`,
    );
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
