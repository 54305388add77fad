import type { ErrorType } from '@apikeys/api-types';

/** The HTTP status of each error type. No default case: adding a type to the spec fails compilation here. */
export function statusFor(type: ErrorType): number {
  switch (type) {
    case 'invalid_request_error':
      return 400;
    case 'authentication_error':
      return 401;
    case 'permission_error':
      return 403;
    case 'not_found_error':
      return 404;
    case 'request_too_large':
      return 413;
    case 'rate_limit_error':
      return 429;
    case 'api_error':
      return 500;
  }
}

/** An error meant for the client: its type and message are sent as they are, so they never hold a secret. */
export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;

  constructor(
    readonly type: ErrorType,
    message: string,
    options: { status?: number; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = options.status ?? statusFor(type);
    this.headers = options.headers ?? {};
  }

  /** Extra response headers, such as `Allow` on a 405. */
  readonly headers: Record<string, string>;
}

/** A 400 whose message names the offending parameter or field. */
export function invalidRequest(parameter: string, problem: string): AppError {
  return new AppError('invalid_request_error', `${parameter}: ${problem}`);
}
