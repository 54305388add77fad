import { ERROR_STATUSES, type ErrorResponse, type ErrorType } from '@apikeys/api-types';
import type { AppError } from '../../domain/errors.js';

/** What an error response carries besides its type and message. */
export interface HttpErrorOptions {
  headers?: Record<string, string>;
  cause?: unknown;
  /** See `HttpError.logged`. */
  logged?: boolean;
}

/**
 * An error response on its way out: the HTTP status, the spec's error type and message, and any headers the status
 * needs (such as `Allow` on a 405). Every error leaves the server as one of these.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Whether what the error answers was logged (or counted and sampled) where it arose: an expected refusal under
   * load, which the error handler must not log again, once per request, as a failure.
   */
  readonly logged: boolean;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    options: HttpErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.headers = options.headers ?? {};
    this.logged = options.logged ?? false;
  }

  /** An error of the given type, with the status the spec gives that type (`x-http-status`). */
  static of(type: ErrorType, message: string, options: HttpErrorOptions = {}): HttpError {
    return new HttpError(ERROR_STATUSES[type], type, message, options);
  }

  /** The generic 500: its message reveals nothing; `cause` goes to the log only. */
  static internal(cause?: unknown): HttpError {
    return HttpError.of('api_error', 'internal server error', { cause });
  }

  /** An application error as it travels over HTTP. */
  static fromAppError(error: AppError): HttpError {
    return HttpError.of(error.type, error.message, { cause: error.cause });
  }
}

/** The one function that builds error bodies. */
export function toErrorResponse(error: HttpError, requestId: string): ErrorResponse {
  return { type: 'error', error: { type: error.type, message: error.message }, request_id: requestId };
}
