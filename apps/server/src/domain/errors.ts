import type { ErrorType } from '@apikeys/api-types';

/**
 * An error meant for the client, in the API's terms: a spec error type and a message, sent as they are, so a
 * message never holds a secret. How it travels over HTTP (its status, any header) is the HTTP layer's business.
 */
export class AppError extends Error {
  override name = 'AppError';

  constructor(
    readonly type: ErrorType,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** An `invalid_request_error` whose message names the offending parameter or field. */
export function invalidRequest(parameter: string, problem: string): AppError {
  return new AppError('invalid_request_error', `${parameter}: ${problem}`);
}
