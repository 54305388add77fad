import { ERROR_STATUSES, type ErrorResponse, type ErrorType } from '@apikeys/api-types';
import type { AppError } from '../../domain/errors.js';

/**
 * An error response on its way out: the HTTP status, the spec's error type and message, and any headers the status
 * needs (such as `Allow` on a 405). Every error leaves the server as one of these.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.headers = options.headers ?? {};
  }

  /** An error of the given type, with the status the spec gives that type (`x-http-status`). */
  static of(
    type: ErrorType,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ): HttpError {
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
