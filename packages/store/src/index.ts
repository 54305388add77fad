export { type ApiKeyJsonV2023_06_01, toApiKeyJsonV2023_06_01 } from './api-key-json-v2023_06_01.js';
export { ExpiredApiKeyError } from './expired-api-key-error.js';
export {
  DatabaseOpenError,
  DatabaseUrlError,
  DEFAULT_SQLITE_PATH,
  describeLocation,
  openMigratedStore,
  openStore,
  parseDatabaseUrl,
  redactUrl,
  type StoreLocation,
} from './open-store.js';
export { DEFAULT_ORGANIZATION } from './organizations.js';
export { openPostgresStore } from './postgres/open-postgres-store.js';
export { newId, randomBase62, seededRandom } from './random.js';
export { checksumOf, hashSecret, SECRET_PREFIX, type SecretKind, secretForm, secretKind } from './secrets.js';
export { openSqliteStore, SQLITE_MEMORY } from './sqlite/open-sqlite-store.js';
export { EFFECTIVE_API_KEY_STATUSES, effectiveStatus } from './statuses.js';
export { type SpecialStoreCall, STORE_CALLS, type StoreCall } from './store-calls.js';
export { DEFAULT_TIMEOUT_MS, type StoreOptions } from './store-options.js';
export { microsToRfc3339, nowMicros, rfc3339ToMicros } from './time.js';
export type * from './types.js';
export { DatabaseUnavailableError, type UnavailableReason, type WriteOutcome } from './unavailable.js';
