import { ERROR_STATUSES, type ErrorType } from '@apikeys/api-types';

/** Errors the client detects itself, with no error body from the server. */
export type ClientErrorType = 'connection_error' | 'timeout_error' | 'pagination_error' | 'unsupported_operation_error';

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

/** A class of error thrown for an error response of one spec error type: `status` is always set. */
export type ResponseErrorClass<Type extends ErrorType = ErrorType> = new (
  message: string,
  details: ResponseErrorDetails,
) => ApiKeysError & { readonly type: Type; readonly status: number };

/** A class of error the client detects itself, with no response: `status` is undefined. */
type ClientErrorClass<Type extends ClientErrorType> = new (
  message: string,
  details?: Omit<ErrorDetails, 'status'>,
) => ApiKeysError & { readonly type: Type; readonly status: undefined };

/** The base class of the errors of one spec error type; `name` is the subclass's name. */
function responseErrorOf<Type extends ErrorType>(type: Type, name: string): ResponseErrorClass<Type> {
  return class extends ApiKeysError {
    override readonly name = name;
    declare readonly type: Type;
    declare readonly status: number;

    constructor(message: string, details: ResponseErrorDetails) {
      super(type, message, details);
    }
  };
}

/** The base class of the errors of one kind the client detects itself; `name` is the subclass's name. */
function clientErrorOf<Type extends ClientErrorType>(type: Type, name: string): ClientErrorClass<Type> {
  return class extends ApiKeysError {
    override readonly name = name;
    declare readonly type: Type;
    declare readonly status: undefined;

    constructor(message: string, details: Omit<ErrorDetails, 'status'> = {}) {
      super(type, message, details);
    }
  };
}

/** 400 (and 405, 415): the request is malformed; the message names the offending parameter, header or field. */
export class InvalidRequestError extends responseErrorOf('invalid_request_error', 'InvalidRequestError') {}

/** 401: the admin key is missing, unknown or disabled. */
export class AuthenticationError extends responseErrorOf('authentication_error', 'AuthenticationError') {}

/** 403: the key is not allowed to call the admin API (a regular API key, say). */
export class PermissionError extends responseErrorOf('permission_error', 'PermissionError') {}

/** 404: no such API key in the organization of the admin key, or no such path. */
export class NotFoundError extends responseErrorOf('not_found_error', 'NotFoundError') {}

/** 413: the request body is too large. */
export class RequestTooLargeError extends responseErrorOf('request_too_large', 'RequestTooLargeError') {}

/** 429: too many requests; thrown once the retries are used up. */
export class RateLimitError extends responseErrorOf('rate_limit_error', 'RateLimitError') {}

/** 5xx: the server failed; thrown once the retries are used up. */
export class ApiError extends responseErrorOf('api_error', 'ApiError') {}

/** 503: the service could not reach its database in time; thrown once the retries are used up. */
export class ServiceUnavailableError extends responseErrorOf('service_unavailable_error', 'ServiceUnavailableError') {}

/** No response: the connection failed (refused, reset, DNS, redirect refused). */
export class ConnectionError extends clientErrorOf('connection_error', 'ConnectionError') {}

/** No response within `timeoutMs`: the attempt was aborted. */
export class TimeoutError extends clientErrorOf('timeout_error', 'TimeoutError') {}

/** Auto-pagination stopped because the server broke the cursor contract (a repeated cursor, say). */
export class PaginationError extends clientErrorOf('pagination_error', 'PaginationError') {}

/** What an `UnsupportedOperationError` knows: the operation, the version that introduced it, the client's version. */
export interface UnsupportedOperationDetails {
  operationId: string;
  introducedIn: string;
  apiVersion: string;
}

/**
 * A method of a later API version was called on a client of an earlier one (`apiKeys.create` on a `v2023_06_01`
 * client, say); nothing was sent. The message names the version that introduced the operation.
 */
export class UnsupportedOperationError extends clientErrorOf(
  'unsupported_operation_error',
  'UnsupportedOperationError',
) {
  readonly operationId: string;
  /** The API version that introduced the operation. */
  readonly introducedIn: string;
  /** The API version of the client. */
  readonly apiVersion: string;

  constructor(message: string, details: UnsupportedOperationDetails) {
    super(message);
    this.operationId = details.operationId;
    this.introducedIn = details.introducedIn;
    this.apiVersion = details.apiVersion;
  }
}

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
    case 'service_unavailable_error':
      return ServiceUnavailableError;
  }
}

function isErrorType(value: unknown): value is ErrorType {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUSES, value);
}

/** The error types by HTTP status, from the spec's `x-http-status` (each type has a status of its own). */
const ERROR_TYPE_OF_STATUS = new Map(
  Object.entries(ERROR_STATUSES).map(([type, status]) => [status as number, type as ErrorType]),
);

/**
 * The error type a status stands for, for error bodies that do not follow the contract (from a proxy, say): the
 * type the spec gives that status, `api_error` for any other 5xx, and `invalid_request_error` for any other 4xx.
 */
export function errorTypeForStatus(status: number): ErrorType {
  return ERROR_TYPE_OF_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
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
