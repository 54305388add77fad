export {
  type AdminClient,
  type AdminClientBase,
  type AdminClientOptions,
  type ApiKeysCreate,
  type ApiKeysReadWrite,
  type ApiKeysResource,
  type ApiKeysRotate,
  type ApiKeysVerify,
  type AuditEventsResource,
  type AuditTrailVersion,
  createAdminClient,
  createVerifierClient,
  DEFAULT_API_VERSION,
  DEFAULTS,
  hasOperation,
  type VerifierClient,
  type VerifierClientOptions,
} from './client.js';
export {
  ApiError,
  ApiKeysError,
  type ApiKeysErrorType,
  AuthenticationError,
  type ClientErrorType,
  ConnectionError,
  type ErrorDetails,
  errorClassFor,
  InvalidRequestError,
  NotFoundError,
  PaginationError,
  PermissionError,
  RateLimitError,
  RequestTooLargeError,
  type ResponseErrorDetails,
  ServiceUnavailableError,
  TimeoutError,
  type UnsupportedOperationDetails,
  UnsupportedOperationError,
} from './errors.js';
export {
  ApiKeyPage,
  AuditEventPage,
  CursorPage,
  type CursorQuery,
  neighbourQueries,
  type PageDirection,
  type PageFields,
  type PagePosition,
} from './pagination.js';
export { type FetchFunction, MAX_RETRY_AFTER_MS, type RequestOptions, type VerifyOptions } from './transport.js';
export type * from './types.js';
export { VERIFIER_CACHE_DEFAULTS, type VerifierCacheOptions } from './verifier/cache-options.js';
export type { VerifierCacheView } from './verifier/caching-verifier.js';
