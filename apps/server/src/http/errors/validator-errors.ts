import { quotable } from '@apikeys/permissions';
import type { Request } from 'express';
import { requestTooLarge, unsupportedMediaType } from './body-parser-errors.js';
import { HttpError } from './http-error.js';
import { noRoute, onPath } from './no-route.js';

/** An error raised by express-openapi-validator (an `HttpError` of its own): a status and the failing items. */
interface ValidatorError {
  status: number;
  path?: string;
  message: string;
  headers?: { Allow?: string };
  errors?: { path: string; message: string; errorCode?: string }[];
}

export function isValidatorError(error: unknown): error is ValidatorError {
  return error instanceof Error && typeof (error as Partial<ValidatorError>).status === 'number' && 'errors' in error;
}

const LOCATIONS: Record<string, string> = {
  query: 'query parameter',
  headers: 'header',
  // express-openapi-validator reports path parameters under /params/.
  params: 'path parameter',
  body: 'body field',
};

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
 * parameter first: `limit: must be <= 1000 (query parameter)`. A name the client chose (an unknown parameter or
 * field) is repeated only when it looks like a name; otherwise the message names where it was.
 */
function describeItem(item: { path: string; message: string }): string {
  const [, location = '', ...rest] = item.path.split('/');
  const kind = LOCATIONS[location];
  const message = clarify(item.message);
  if (kind === undefined) {
    // A field named "" leaves the validator no path to report it by.
    return message.startsWith('must NOT have additional properties') ? 'body: unknown field (an empty name)' : message;
  }
  // An item of an array parameter or field is named by its index: `type[1]`.
  const isIndex = (part: string) => /^\d+$/.test(part);
  const shown = rest.every((part) => isIndex(part) || quotable(part, 'name'));
  const name = shown
    ? rest.reduce((named, part) => (isIndex(part) ? `${named}[${part}]` : named ? `${named}.${part}` : part), '')
    : '';
  if (item.message.startsWith('Unknown query parameter')) {
    return shown ? `${name}: unknown query parameter` : 'query: unknown query parameter (its name is not shown)';
  }
  if (location === 'body') {
    if (message.startsWith('must NOT have additional properties')) {
      return shown ? `${name || 'body'}: unknown field` : 'body: unknown field (its name is not shown)';
    }
    return name === '' ? `body: ${message}` : `${name}: ${message} (${kind})`;
  }
  return `${name || location}: ${message} (${kind})`;
}

/**
 * Translates a validator error into the API's words. A response that fails validation is the server's fault: the
 * client learns nothing of which field broke.
 */
export function fromValidatorError(error: ValidatorError, req: Request): HttpError {
  if (error.status >= 500 || error.path?.startsWith('/response')) {
    return HttpError.internal(error);
  }
  switch (error.status) {
    case 404:
      return noRoute(req);
    case 405: {
      const allow = error.headers?.Allow ?? '';
      return new HttpError(
        405,
        'invalid_request_error',
        `method ${req.method} is not allowed ${onPath(req.path)}; allowed: ${allow}`,
        { headers: allow ? { Allow: allow } : {} },
      );
    }
    case 415:
      return unsupportedMediaType();
    case 413:
      return requestTooLarge();
    case 400: {
      if (error.message.startsWith('malformed uri')) {
        return HttpError.of('invalid_request_error', 'path: malformed percent-encoding in the URL');
      }
      // An invalid nullable enum yields one item per branch of the schema; the first names the allowed values.
      const first = error.errors?.[0];
      return HttpError.of('invalid_request_error', first ? describeItem(first) : error.message);
    }
    default:
      return HttpError.internal(error);
  }
}
