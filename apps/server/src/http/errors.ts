import type { ErrorResponse } from '@apikeys/api-types';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';
import { requestIdOf } from './request-id.js';
import { sendJson } from './send-json.js';

/** The one function that builds error bodies. */
export function toErrorResponse(error: AppError, requestId: string): ErrorResponse {
  return { type: 'error', error: { type: error.type, message: error.message }, request_id: requestId };
}

/** An error raised by express-openapi-validator (an `HttpError`): a status and the failing items. */
interface ValidatorError {
  status: number;
  path?: string;
  message: string;
  headers?: { Allow?: string };
  errors?: { path: string; message: string; errorCode?: string }[];
}

/** An error raised by Express's JSON body parser. */
interface BodyParserError {
  type: string;
  status: number;
  message: string;
}

const LOCATIONS: Record<string, string> = {
  query: 'query parameter',
  headers: 'header',
  // express-openapi-validator reports path parameters under /params/.
  params: 'path parameter',
  body: 'body field',
};

function isValidatorError(error: unknown): error is ValidatorError {
  return error instanceof Error && typeof (error as Partial<ValidatorError>).status === 'number' && 'errors' in error;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    error instanceof Error &&
    typeof (error as Partial<BodyParserError>).type === 'string' &&
    typeof (error as Partial<BodyParserError>).status === 'number'
  );
}

const ENUM_MESSAGE = 'must be equal to one of the allowed values: ';
// The spec's pattern that keeps NUL characters (which PostgreSQL cannot store) out of every string input.
const NO_NUL_MESSAGE = 'must match pattern "^[^\\u0000]*$"';

/** Rewrites the validator's wording where it is unclear to a client. */
function clarify(message: string): string {
  if (message.startsWith(ENUM_MESSAGE)) {
    // The validator joins the allowed values with ', ', which renders null as an empty string.
    const allowed = message
      .slice(ENUM_MESSAGE.length)
      .split(', ')
      .map((value) => (value === '' ? 'null' : JSON.stringify(value)));
    return `must be one of ${allowed.join(', ')}`;
  }
  if (message === NO_NUL_MESSAGE) {
    return 'must not contain NUL (\\u0000) characters';
  }
  if (message.startsWith('Empty value found')) {
    return 'must not be empty';
  }
  return message;
}

/**
 * Turns one validator item (`{path: '/query/limit', message: 'must be <= 1000'}`) into a message that names the
 * parameter first: `limit: must be <= 1000 (query parameter)`.
 */
function describeItem(item: { path: string; message: string }): string {
  const [, location = '', ...rest] = item.path.split('/');
  const name = rest.join('.');
  const kind = LOCATIONS[location];
  const message = clarify(item.message);
  if (kind === undefined) {
    return message;
  }
  if (item.message.startsWith('Unknown query parameter')) {
    return `${name}: unknown query parameter`;
  }
  if (location === 'body') {
    if (message.startsWith('must NOT have additional properties')) {
      return `${name || 'body'}: unknown field`;
    }
    return name === '' ? `body: ${message}` : `${name}: ${message} (${kind})`;
  }
  return `${name || location}: ${message} (${kind})`;
}

function fromValidatorError(error: ValidatorError, req: Request): AppError {
  switch (error.status) {
    case 404:
      return noRoute(req);
    case 405: {
      const allow = error.headers?.Allow ?? '';
      return new AppError(
        'invalid_request_error',
        `method ${req.method} is not allowed on ${req.path}; allowed: ${allow}`,
        {
          status: 405,
          headers: allow ? { Allow: allow } : {},
        },
      );
    }
    case 415:
      return new AppError('invalid_request_error', 'content-type: the request body must be application/json', {
        status: 415,
      });
    case 413:
      return new AppError('request_too_large', 'request body is larger than 1 MiB');
    case 400: {
      if (error.message.startsWith('malformed uri')) {
        return new AppError('invalid_request_error', 'path: malformed percent-encoding in the URL');
      }
      // An invalid nullable enum yields one item per branch of the schema; the first names the allowed values.
      const first = error.errors?.[0];
      return new AppError('invalid_request_error', first ? describeItem(first) : error.message);
    }
    default:
      return new AppError('api_error', 'internal server error', { cause: error });
  }
}

function fromBodyParserError(error: BodyParserError): AppError {
  switch (error.type) {
    case 'entity.too.large':
      return new AppError('request_too_large', 'request body is larger than 1 MiB');
    case 'entity.empty':
      return new AppError('invalid_request_error', 'body: required; send a JSON object');
    case 'entity.parse.failed':
      return new AppError('invalid_request_error', 'body: malformed JSON; send a JSON object');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new AppError('invalid_request_error', `content-type: ${error.message}`, { status: 415 });
    default:
      return new AppError('invalid_request_error', `body: ${error.message}`, { status: error.status });
  }
}

/** Maps anything thrown to an AppError. Unknown errors become a generic 500 whose details stay in the log. */
export function toAppError(error: unknown, req: Request): AppError {
  if (error instanceof AppError) {
    return error;
  }
  if (isValidatorError(error)) {
    // Response validation failures are the server's fault: never tell the client which field broke.
    if (error.status >= 500 || error.path?.startsWith('/response')) {
      return new AppError('api_error', 'internal server error', { cause: error });
    }
    return fromValidatorError(error, req);
  }
  if (isBodyParserError(error) && error.status < 500) {
    return fromBodyParserError(error);
  }
  return new AppError('api_error', 'internal server error', { cause: error });
}

/** The central error handler: every error response goes out here, in the spec's error shape. */
export function handleErrors(logger: Logger) {
  // Express recognises error handlers by their four parameters.
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = toAppError(error, req);
    const requestId = requestIdOf(res);
    if (appError.status >= 500) {
      logger.error({ request_id: requestId, err: appError.cause ?? appError }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(appError.headers);
    sendJson(res, appError.status, toErrorResponse(appError, requestId));
  };
}

/**
 * The handler after all others: it receives errors raised while an error response was being sent (the response
 * validator refusing a status the operation does not document, a bug of ours) and answers with the generic 500,
 * written without `res.json` so it cannot fail the same way.
 */
export function lastResort(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    const requestId = requestIdOf(res);
    logger.error({ request_id: requestId, err: error }, 'error response failed');
    sendUnvalidatedServerError(res, requestId);
  };
}

const SERVER_ERROR = new AppError('api_error', 'internal server error');

/** The generic 500, written directly; its shape is the same `toErrorResponse` output every other error has. */
function sendUnvalidatedServerError(res: Response, requestId: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res
    .status(500)
    .type('application/json')
    .end(JSON.stringify(toErrorResponse(SERVER_ERROR, requestId)));
}

/** The 404 of a path (or letter case, or trailing slash) that the spec does not declare. */
export function noRoute(req: Request): AppError {
  return new AppError('not_found_error', `no route for ${req.method} ${req.path}`);
}

/** Answers requests that reached no route (the validator normally answers these first). */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(noRoute(req));
}
