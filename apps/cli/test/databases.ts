import { createTestDatabase, postgresAvailable } from '@apikeys/server/testing';
import { openStore, parseDatabaseUrl, type Store } from '@apikeys/store';
import { tempDatabase } from './run-cli.js';

/** A database of its own for one test file, on one engine, and how to reach it from the CLI and from the test. */
export interface CliDatabase {
  env: { DATABASE_URL: string };
  /** Opens the store on the same database the CLI uses (without migrating it). */
  openStore(): Promise<Store>;
  drop(): Promise<void>;
}

function onUrl(url: string, drop: () => Promise<void>): CliDatabase {
  return {
    env: { DATABASE_URL: url },
    openStore: async () => (await openStore(parseDatabaseUrl(url))).store,
    drop,
  };
}

/** A SQLite file in a fresh temporary directory. */
export async function sqliteDatabase(): Promise<CliDatabase> {
  const db = tempDatabase();
  return onUrl(db.env.DATABASE_URL, async () => db.remove());
}

/** A fresh database on the test PostgreSQL server. */
export async function postgresDatabase(): Promise<CliDatabase> {
  const database = await createTestDatabase();
  return onUrl(database.url, () => database.drop());
}

// In CI this throws when PostgreSQL is unreachable, so its cases are never left out there.
const postgres = await postgresAvailable();

/** The engines the CLI runs on here: SQLite always, PostgreSQL when a server is reachable (always in CI). */
export const ENGINES = [
  { engine: 'SQLite', create: sqliteDatabase },
  ...(postgres ? [{ engine: 'PostgreSQL', create: postgresDatabase }] : []),
];

/** Whether the PostgreSQL cases run. */
export const POSTGRES_AVAILABLE = postgres;
