import { DEFAULT_ORGANIZATION, openStore, parseDatabaseUrl } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';

/** A database ready for server processes to open, with what a test needs to call them. */
export interface PreparedDatabase {
  url: string;
  /** The secret of an active admin key of the default organization. */
  adminKey: string;
  /** The IDs of the API keys created, newest first. */
  keyIds: string[];
}

/**
 * Migrates the database of `url` (`file:...` or `postgres://...`) and creates an admin key of the default
 * organization and `apiKeys` API keys in it, then closes it.
 */
export async function prepareDatabase(url: string, options: { apiKeys?: number } = {}): Promise<PreparedDatabase> {
  const { store, migrator } = await openStore(parseDatabaseUrl(url), { poolSize: 2 });
  try {
    await migrator.migrateToLatest();
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { secret } = await store.createAdminKey({ organizationId, name: 'test admin' });
    const count = options.apiKeys ?? 0;
    if (count === 0) {
      return { url, adminKey: secret, keyIds: [] };
    }
    await seedApiKeys(store, { organizationId, count, workspaces: 2, users: 3, seed: 13 });
    const listed = await store.listApiKeys({ organizationId, limit: count });
    const keyIds = listed.kind === 'page' ? listed.keys.map((key) => key.id) : [];
    return { url, adminKey: secret, keyIds };
  } finally {
    await store.close();
  }
}
