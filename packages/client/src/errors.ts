import type { ErrorType } from '@apikeys/api-types';

/** Errors the client detects itself, with no error body from the server. */
export type ClientErrorType = 'connection_error' | 'timeout_error' | 'pagination_error';

/** The `type` of every error this client throws: the spec's error types plus the client's own. */
export type ApiKeysErrorType = ErrorType | ClientErrorType;

/** What an error knows about the exchange that caused it; every field may be missing. */
export interface ErrorDetails {
  /** The HTTP status; undefined when no response arrived. */
  status?: number | undefined;
  /** The `request-id` of the response (or of the error body). */
  requestId?: string | undefined;
  /** The headers of the response. */
  headers?: Headers | undefined;
  /** The parsed error body (an `ErrorResponse` when the server kept to the contract), or its text. */
  body?: unknown;
  cause?: unknown;
}

/** What an error built from an HTTP response knows: its status, at least. */
export interface ResponseErrorDetails extends ErrorDetails {
  status: number;
}

/** The base class of every error the client throws. */
export class ApiKeysError extends Error {
  override readonly name: string = 'ApiKeysError';
  readonly type: ApiKeysErrorType;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly headers: Headers | undefined;
  readonly body: unknown;

  constructor(type: ApiKeysErrorType, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.type = type;
    this.status = details.status;
    this.requestId = details.requestId;
    this.headers = details.headers;
    this.body = details.body;
  }
}

/** 400 (and 405, 415): the request is malformed; the message names the offending parameter, header or field. */
export class InvalidRequestError extends ApiKeysError {
  override readonly name = 'InvalidRequestError';
  declare readonly type: 'invalid_request_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('invalid_request_error', message, details);
  }
}

/** 401: the admin key is missing, unknown or disabled. */
export class AuthenticationError extends ApiKeysError {
  override readonly name = 'AuthenticationError';
  declare readonly type: 'authentication_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('authentication_error', message, details);
  }
}

/** 403: the key is not allowed to call the admin API (a regular API key, say). */
export class PermissionError extends ApiKeysError {
  override readonly name = 'PermissionError';
  declare readonly type: 'permission_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('permission_error', message, details);
  }
}

/** 404: no such API key in the organization of the admin key, or no such path. */
export class NotFoundError extends ApiKeysError {
  override readonly name = 'NotFoundError';
  declare readonly type: 'not_found_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('not_found_error', message, details);
  }
}

/** 413: the request body is too large. */
export class RequestTooLargeError extends ApiKeysError {
  override readonly name = 'RequestTooLargeError';
  declare readonly type: 'request_too_large';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('request_too_large', message, details);
  }
}

/** 429: too many requests; thrown once the retries are used up. */
export class RateLimitError extends ApiKeysError {
  override readonly name = 'RateLimitError';
  declare readonly type: 'rate_limit_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('rate_limit_error', message, details);
  }
}

/** 5xx: the server failed; thrown once the retries are used up. */
export class ApiError extends ApiKeysError {
  override readonly name = 'ApiError';
  declare readonly type: 'api_error';
  declare readonly status: number;

  constructor(message: string, details: ResponseErrorDetails) {
    super('api_error', message, details);
  }
}

/** No response: the connection failed (refused, reset, DNS, redirect refused). `status` is undefined. */
export class ConnectionError extends ApiKeysError {
  override readonly name = 'ConnectionError';
  declare readonly type: 'connection_error';
  declare readonly status: undefined;

  constructor(message: string, details: Omit<ErrorDetails, 'status'> = {}) {
    super('connection_error', message, details);
  }
}

/** No response within `timeoutMs`: the attempt was aborted. `status` is undefined. */
export class TimeoutError extends ApiKeysError {
  override readonly name = 'TimeoutError';
  declare readonly type: 'timeout_error';
  declare readonly status: undefined;

  constructor(message: string, details: Omit<ErrorDetails, 'status'> = {}) {
    super('timeout_error', message, details);
  }
}

/** Auto-pagination stopped because the server broke the cursor contract (a repeated cursor, say). */
export class PaginationError extends ApiKeysError {
  override readonly name = 'PaginationError';
  declare readonly type: 'pagination_error';
  declare readonly status: undefined;

  constructor(message: string, details: Omit<ErrorDetails, 'status'> = {}) {
    super('pagination_error', message, details);
  }
}

/** A class of error thrown for an error response. */
export type ResponseErrorClass = new (message: string, details: ResponseErrorDetails) => ApiKeysError;

/** The class of each spec error type. No default: a new error type in the spec fails compilation here. */
export function errorClassFor(type: ErrorType): ResponseErrorClass {
  switch (type) {
    case 'invalid_request_error':
      return InvalidRequestError;
    case 'authentication_error':
      return AuthenticationError;
    case 'permission_error':
      return PermissionError;
    case 'not_found_error':
      return NotFoundError;
    case 'request_too_large':
      return RequestTooLargeError;
    case 'rate_limit_error':
      return RateLimitError;
    case 'api_error':
      return ApiError;
  }
}

/** Every spec error type, for checking bodies at run time; `Record` makes the compiler keep it complete. */
const ERROR_TYPES: Record<ErrorType, true> = {
  invalid_request_error: true,
  authentication_error: true,
  permission_error: true,
  not_found_error: true,
  request_too_large: true,
  rate_limit_error: true,
  api_error: true,
};

function isErrorType(value: unknown): value is ErrorType {
  return typeof value === 'string' && Object.hasOwn(ERROR_TYPES, value);
}

/** The error type a status stands for, for error bodies that do not follow the contract (from a proxy, say). */
export function errorTypeForStatus(status: number): ErrorType {
  if (status === 401) {
    return 'authentication_error';
  }
  if (status === 403) {
    return 'permission_error';
  }
  if (status === 404) {
    return 'not_found_error';
  }
  if (status === 413) {
    return 'request_too_large';
  }
  if (status === 429) {
    return 'rate_limit_error';
  }
  if (status >= 500) {
    return 'api_error';
  }
  return 'invalid_request_error';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The parts of an error body that follow the contract; whatever is missing or malformed is left out. */
function readErrorBody(body: unknown): { type?: ErrorType; message?: string; requestId?: string } {
  if (!isRecord(body) || body.type !== 'error' || !isRecord(body.error)) {
    return {};
  }
  const { type, message } = body.error;
  return {
    ...(isErrorType(type) ? { type } : {}),
    ...(typeof message === 'string' ? { message } : {}),
    ...(typeof body.request_id === 'string' ? { requestId: body.request_id } : {}),
  };
}

const MAX_TEXT_IN_MESSAGE = 200;

function fallbackMessage(response: Response, body: unknown): string {
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const text = typeof body === 'string' ? body.trim().slice(0, MAX_TEXT_IN_MESSAGE) : '';
  return text ? `HTTP ${status}: ${text}` : `HTTP ${status}`;
}

/**
 * The error for an error response: its class comes from the body's `error.type` when the body follows the contract
 * (`ErrorResponse`), else from the status.
 */
export function errorFromResponse(response: Response, body: unknown): ApiKeysError {
  const parsed = readErrorBody(body);
  const ErrorClass = errorClassFor(parsed.type ?? errorTypeForStatus(response.status));
  return new ErrorClass(parsed.message ?? fallbackMessage(response, body), {
    status: response.status,
    requestId: response.headers.get('request-id') ?? parsed.requestId,
    headers: response.headers,
    body,
  });
}
