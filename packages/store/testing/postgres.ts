import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_POSTGRES_URL } from './postgres-available.js';

/** A database created for one test file and dropped after it, so runs never see each other's data. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** The URL of database `name` on the server of `serverUrl` (same host, port, user and options). */
export function databaseUrl(serverUrl: string, name: string): string {
  const parsed = new URL(serverUrl);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs `work` on one connection to `url`, closed afterwards. */
export async function onPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database with a unique name on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `apikeys_test_${randomBytes(6).toString('hex')}`;
  await onPostgres(TEST_POSTGRES_URL, (client) => client.query(`create database ${name}`));
  return {
    url: databaseUrl(TEST_POSTGRES_URL, name),
    async drop() {
      await onPostgres(TEST_POSTGRES_URL, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}
