import { createEngineDatabase, type TestEngine, testEngines } from '@apikeys/server/testing';
import { openStore, parseDatabaseUrl, type Store } from '@apikeys/store';

/** A database of its own for one test file, on one engine, and how to reach it from the CLI and from the test. */
export interface CliDatabase {
  env: { DATABASE_URL: string };
  /** Opens the store on the same database the CLI uses (without migrating it). */
  openStore(): Promise<Store>;
  drop(): Promise<void>;
}

/** A new, empty database on `engine`: a SQLite file in a fresh temporary directory, or one on the test server. */
async function cliDatabase(engine: TestEngine): Promise<CliDatabase> {
  const { url, drop } = await createEngineDatabase(engine);
  return {
    env: { DATABASE_URL: url },
    openStore: async () => (await openStore(parseDatabaseUrl(url))).store,
    drop,
  };
}

/**
 * The engines the CLI runs on here (`testEngines`: SQLite always, PostgreSQL when a server is reachable, always in
 * CI), each with a factory of databases.
 */
export const ENGINES = (await testEngines()).map((engine) => ({
  engine: engine.name,
  create: () => cliDatabase(engine),
}));
