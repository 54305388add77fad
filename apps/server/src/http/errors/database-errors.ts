import { DatabaseUnavailableError } from '@apikeys/store';
import { HttpError } from './http-error.js';

/** Seconds a client is asked to wait before trying again when the database is unavailable. */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

export function isDatabaseUnavailable(error: unknown): error is DatabaseUnavailableError {
  return error instanceof DatabaseUnavailableError;
}

/** The 503 of a database that is unavailable or too slow: the details (host, driver message) stay in the log. */
export function fromDatabaseUnavailable(error: DatabaseUnavailableError): HttpError {
  return HttpError.of('service_unavailable_error', 'the database is unavailable; retry later', {
    headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
    cause: error,
  });
}
