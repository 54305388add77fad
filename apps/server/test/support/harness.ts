import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ClientPaths } from '@apikeys/api-types';
import { type KyselyStore, openSqliteStore, openStore, SQLITE_MEMORY } from '@apikeys/store';
import { createTestDatabase } from '@apikeys/store/testing';
import createClient, { type Client } from 'openapi-fetch';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import { listen, shutdown } from '../../src/server.js';

/** The version every test request sends unless it is testing the header itself. */
export const API_VERSION = '2023-06-01';

/** A server running in this process on a free port, with its own in-memory database. */
export interface TestServer {
  baseUrl: string;
  store: KyselyStore;
  /** The secret of an admin key of the default organization. */
  adminKey: string;
  /** A client typed from the generated types, sending the admin key and version on every request. */
  client: Client<ClientPaths>;
  /** Every line the server logged, as raw JSON text. */
  logLines: string[];
  /** A typed client for another admin key (another organization, say). */
  clientFor(adminKey: string): Client<ClientPaths>;
  /** A raw fetch against the server, for requests the typed client cannot express. */
  request(path: string, init?: RequestInit): Promise<{ response: Response; body: unknown; text: string }>;
  close(): Promise<void>;
}

/** Captures the log in memory so tests can read it. */
function captureLog(lines: string[]) {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

/** Which store the suite runs on: the vitest `postgres` project sets TEST_STORE=postgres. */
export const TEST_STORE = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A fresh, empty store of the suite's kind: an in-memory SQLite database, or a PostgreSQL database created for it
 * and dropped when the store is closed.
 */
export async function openTestStore(): Promise<KyselyStore> {
  if (TEST_STORE === 'sqlite') {
    return openSqliteStore(SQLITE_MEMORY);
  }
  const database = await createTestDatabase();
  const store = await openStore({ kind: 'postgres', url: database.url }, { poolSize: 4 });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await database.drop();
  };
  return store;
}

/** Starts the app on port 0 over a fresh store (see `openTestStore`). Pass a store to use another one. */
export async function startTestServer(options: { store?: KyselyStore } = {}): Promise<TestServer> {
  const store = options.store ?? (await openTestStore());
  await store.migrate();
  const logLines: string[] = [];
  const logger = createLogger('info', captureLog(logLines));
  const server = await listen(createApp({ store, logger }), { port: 0, host: '127.0.0.1', logger });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { secret: adminKey } = await store.createAdminKey({ organizationId: 'org_default', name: 'test admin' });

  const clientFor = (key: string) =>
    createClient<ClientPaths>({ baseUrl, headers: { 'x-api-key': key, 'vendor-version': API_VERSION } });

  return {
    baseUrl,
    store,
    adminKey,
    client: clientFor(adminKey),
    logLines,
    clientFor,
    async request(path, init = {}) {
      const response = await fetch(`${baseUrl}${path}`, init);
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { response, body, text };
    },
    async close() {
      await shutdown(server, 1000);
      await store.close();
    },
  };
}

/** Headers of an authenticated request with the given admin key. */
export function authHeaders(adminKey: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-api-key': adminKey, 'vendor-version': API_VERSION, ...extra };
}
