/**
 * `@apikeys/server/testing`: test support for every package above the store, and for the benchmarks. It starts the
 * server in-process and as a child process, creates organizations, keys and stores, and checks responses against
 * the spec. Database helpers live in `@apikeys/store/testing` (the store's own tests use them there, below the
 * server) and are re-exported here, so that every other package imports one module.
 */
export { API_VERSION } from '@apikeys/api-types';
export { DEFAULT_ORGANIZATION, nowMicros, seededRandom } from '@apikeys/store';
export { seedApiKeys, seedAuditEvents } from '@apikeys/store/seeding';
export {
  createEngineDatabase,
  createTestDatabase,
  createTestKey,
  databaseUrl,
  explainPostgres,
  migrationNames,
  onPostgres,
  type PlanNode,
  type PrivatePostgres,
  planNodes,
  postgresAvailable,
  privatePostgresAvailable,
  SqliteLockHolder,
  startPrivatePostgres,
  TEST_POSTGRES_URL,
  type TestDatabase,
  type TestEngine,
  type TestKeyFields,
  testEngines,
} from '@apikeys/store/testing';
export { CHANGES_PATH, type FeedEvent, type FeedReader, subscribeToChanges } from './change-feed.js';
export {
  type ErrorBody,
  type ExpectedError,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectNoInternals,
  expectUnavailable,
  UNAVAILABLE_MESSAGES,
} from './expect.js';
export { createTestOrganization, snapshotKeys, type TestOrganization } from './fixtures.js';
export { closedPort, fetchText, parseRawResponse, type RawResponse, sendRaw, type TextResponse } from './http.js';
export {
  authHeaders,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
  type TypedClient,
} from './in-process-server.js';
export { type PreparedDatabase, prepareDatabase } from './prepared-database.js';
export {
  deployDocHaproxyConfig,
  HAPROXY_BINARY,
  type HaproxyPlaces,
  type HaproxyStatRow,
  type PrivateHaproxy,
  startPrivateHaproxy,
} from './private-haproxy.js';
export { type PrivateRedis, startPrivateRedis } from './private-redis.js';
export { type PrometheusExposition, type PrometheusSample, parsePrometheusText } from './prometheus-text.js';
export { type ConnectionEnd, openRawConnection, type RawConnection, rawRequest } from './raw-connection.js';
export { API_KEYS_PATH, apiKeyPath, jsonPostHeaders, postRaw, VERSION_HEADER } from './requests.js';
export { buildServerBundle } from './server-bundle.js';
export {
  type LogLine,
  listeningUrl,
  type ProcessExit,
  type ServerProcess,
  type ServerProcessOptions,
  type StartedServerProcess,
  spawnServerProcess,
  startServerProcess,
} from './server-process.js';
export { documentedStatuses, schemaErrors, specErrors, specOperationIds } from './spec-responses.js';
export { openTestStore, TEST_STORE } from './stores.js';
