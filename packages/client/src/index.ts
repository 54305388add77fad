export {
  type AdminClient,
  type AdminClientOptions,
  type ApiKeysCreate,
  type ApiKeysReadWrite,
  type ApiKeysResource,
  type ApiKeysRotate,
  createAdminClient,
  DEFAULT_API_VERSION,
  DEFAULTS,
  hasOperation,
  type RequestOptions,
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
export { ApiKeyPage, type PageDirection } from './pagination.js';
export { type FetchFunction, MAX_RETRY_AFTER_MS } from './transport.js';
export type * from './types.js';
