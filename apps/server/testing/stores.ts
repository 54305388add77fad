import { type OpenedStore, openSqliteStore, openStore, SQLITE_MEMORY } from '@apikeys/store';
import { createTestDatabase, projectEngine } from '@apikeys/store/testing';

/** Which store a suite runs on: the engine of its vitest project (`engineProjects`). */
export const TEST_STORE = projectEngine().kind;

/**
 * A fresh, empty, unmigrated store of the suite's kind: an in-memory SQLite database, or a PostgreSQL database
 * created for it and dropped when the store is closed.
 */
export async function openTestStore(): Promise<OpenedStore> {
  if (TEST_STORE === 'sqlite') {
    return openSqliteStore(SQLITE_MEMORY);
  }
  const database = await createTestDatabase();
  const opened = await openStore({ kind: 'postgres', url: database.url }, { poolSize: 4 });
  const close = opened.store.close.bind(opened.store);
  opened.store.close = async () => {
    await close();
    await database.drop();
  };
  return opened;
}
