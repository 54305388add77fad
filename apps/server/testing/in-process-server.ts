import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { API_VERSION, type ApiVersion, type ClientPaths, type ClientPathsOf } from '@apikeys/api-types';
import { DEFAULT_ORGANIZATION, type OpenedStore, type Store } from '@apikeys/store';
import createClient, { type Client } from 'openapi-fetch';
import type { ChangeFeedSettings, KeyChangeFeed } from '../src/change-feed/key-change-feed.js';
import type { Clock } from '../src/clock.js';
import { composeServer } from '../src/compose.js';
import type { Readiness } from '../src/health/readiness.js';
import { createLogger, listen, shutdown, warmUpAndMarkStarted } from '../src/index.js';
import type { LogLevel } from '../src/logger.js';
import type { Metrics } from '../src/metrics/metrics.js';
import type { RateLimitSettings } from '../src/rate-limits/request-limiter.js';
import { DEFAULT_KEY_CACHE, type KeyCacheSettings } from '../src/verification/key-cache.js';
import { createTestOrganization, type TestOrganization } from './fixtures.js';
import { fetchText, type TextResponse } from './http.js';
import { openTestStore } from './stores.js';

/** A typed client of the API (openapi-fetch on the generated types) that sends an admin key and the version. */
export type TypedClient = Client<ClientPaths>;

/** An organization of a test server's, with a typed client for its admin key. */
export interface TestOrganizationWithClient extends TestOrganization {
  client: TypedClient;
}

/** The app running in this process on a free port, over a store of its own. */
export interface TestServer {
  baseUrl: string;
  store: Store;
  /** The secret of an admin key of the default organization. */
  adminKey: string;
  /** A typed client for `adminKey`. */
  client: TypedClient;
  /** Every line the server logged, as raw JSON text. */
  logLines: string[];
  /** What `GET /ready` reports (mark it draining to see a shutting-down server's answer). */
  readiness: Readiness;
  /** A typed client for another admin key (of another organization, say). */
  clientFor(adminKey: string): TypedClient;
  /** A typed client of another API version, for `adminKey` or the default organization's admin key. */
  versionClient<V extends ApiVersion>(version: V, adminKey?: string): Client<ClientPathsOf<V>>;
  /** Creates an organization with an admin key, and a client for it. */
  createOrganization(name?: string): Promise<TestOrganizationWithClient>;
  /** The server's change feed (`GET /v1/keys/changes`). */
  changeFeed: KeyChangeFeed;
  /** Writes the uses of keys noted since the last write (the server does it every ten seconds). */
  flushKeyUsage(): Promise<void>;
  /** A raw fetch against the server, for requests the typed client cannot express. */
  request(path: string, init?: RequestInit): Promise<TextResponse>;
  close(): Promise<void>;
}

/** Collects log lines in memory, so that tests can read them. */
function captureLog(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

/** Headers of an authenticated request: the admin key and the API version, plus `extra`. */
export function authHeaders(adminKey: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-api-key': adminKey, 'vendor-version': API_VERSION, ...extra };
}

/**
 * Starts the app, wired as `main.ts` wires it (`composeServer`), on port 0 of 127.0.0.1 over a fresh store of the
 * suite's kind (`openTestStore`), migrated, with an admin key of the default organization. Pass `opened` to use
 * another store; it is migrated too. Requests are not rate limited unless `rateLimits` says how. With `metrics`, the
 * app, its store and its limiter record into them.
 */
export async function startTestServer(
  options: {
    opened?: OpenedStore;
    rateLimits?: RateLimitSettings;
    metrics?: Metrics;
    /** `info` unless given; `debug` logs the probes' requests too. */
    logLevel?: LogLevel;
    /** The verification cache's settings; the server's defaults unless given. */
    keyCache?: KeyCacheSettings;
    /** The change feed's bounds; the server's defaults unless given. */
    changeFeed?: Partial<ChangeFeedSettings>;
    /** The admin console's build output to serve; `apps/console/dist` unless given. */
    consoleDirectory?: string;
    /** What the handlers read the moment of a request from; the wall clock unless given. */
    clock?: Clock;
  } = {},
): Promise<TestServer> {
  const { store: openedStore, migrator } = options.opened ?? (await openTestStore());
  await migrator.migrateToLatest();
  const logLines: string[] = [];
  const logger = createLogger(options.logLevel ?? 'info', captureLog(logLines));
  // Uses of keys are written when a test asks (`flushKeyUsage`) and at close, never on a timer: a test decides when.
  const composed = await composeServer({
    store: openedStore,
    logger,
    metrics: options.metrics,
    rateLimits: options.rateLimits,
    keyCache: options.keyCache ?? DEFAULT_KEY_CACHE,
    changeFeed: options.changeFeed,
    consoleDirectory: options.consoleDirectory,
    clock: options.clock,
    writeUsageOnTimer: false,
  });
  const { app, store, readiness, usage, endSubscriptions, stopBackgroundWork, closeConnections } = composed;
  const server = await listen(app, { port: 0, host: '127.0.0.1', logger });
  await warmUpAndMarkStarted(app, { logger, readiness });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { secret: adminKey } = await store.createAdminKey({
    organizationId: DEFAULT_ORGANIZATION.id,
    name: 'test admin',
  });
  const clientFor = (key: string) => createClient<ClientPaths>({ baseUrl, headers: authHeaders(key) });

  return {
    baseUrl,
    store,
    adminKey,
    client: clientFor(adminKey),
    logLines,
    readiness,
    clientFor,
    versionClient: (version, key = adminKey) =>
      createClient({ baseUrl, headers: authHeaders(key, { 'vendor-version': version }) }),
    async createOrganization(name) {
      const organization = await createTestOrganization(store, name);
      return { ...organization, client: clientFor(organization.adminKey) };
    },
    request: (path, init) => fetchText(`${baseUrl}${path}`, init),
    changeFeed: composed.changeFeed,
    flushKeyUsage: () => usage.flush(),
    async close() {
      endSubscriptions();
      await shutdown(server, 1000);
      await stopBackgroundWork();
      await closeConnections();
    },
  };
}
