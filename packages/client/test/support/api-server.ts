import type { AddressInfo } from 'node:net';
import { createApp, createLogger, listen, shutdown } from '@apikeys/server';
import { type KyselyStore, openSqliteStore, SQLITE_MEMORY } from '@apikeys/store';

/** The real admin API, running in this process on a free port over its own in-memory SQLite store. */
export interface ApiServer {
  baseUrl: string;
  store: KyselyStore;
  /** The secret of an admin key of the default organization. */
  adminKey: string;
  close(): Promise<void>;
}

/** An organization of its own, so a test's keys never meet another test's. */
export interface TestOrganization {
  id: string;
  adminKey: string;
}

/** Starts the app the way the server's own test harness does: port 0, SQLite in memory, logs discarded. */
export async function startApiServer(): Promise<ApiServer> {
  const store = openSqliteStore(SQLITE_MEMORY);
  await store.migrate();
  const logger = createLogger('silent');
  const server = await listen(createApp({ store, logger }), { port: 0, host: '127.0.0.1', logger });
  const { port } = server.address() as AddressInfo;
  const { secret } = await store.createAdminKey({ organizationId: 'org_default', name: 'client tests' });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    store,
    adminKey: secret,
    async close() {
      await shutdown(server, 1000);
      await store.close();
    },
  };
}

/** Creates an organization with an active admin key. */
export async function createOrganization(server: ApiServer, name: string): Promise<TestOrganization> {
  const organization = await server.store.createOrganization(name);
  const { secret } = await server.store.createAdminKey({ organizationId: organization.id, name: 'admin' });
  return { id: organization.id, adminKey: secret };
}
