import { DatabaseUnavailableError, type WriteOutcome } from '@apikeys/store';
import { HttpError } from './http-error.js';

/** Seconds a client is asked to wait before trying again when the database is unavailable. */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

/** The 503's message: for a read, and for a write by what the store knows it did (spec: ServiceUnavailable). */
const UNAVAILABLE_MESSAGES: Record<'read' | WriteOutcome, string> = {
  read: 'the database is unavailable; retry later',
  not_made: 'the database is unavailable; the change was not made: retry later',
  unknown: 'the database is unavailable; the outcome is unknown: read the key before retrying',
};

export function isDatabaseUnavailable(error: unknown): error is DatabaseUnavailableError {
  return error instanceof DatabaseUnavailableError;
}

/** Whether a request of this method asks for a change: only its 503 says whether the change was made. */
export function isWriteMethod(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/**
 * The 503 of a database that is unavailable or too slow: for a write, whether the change was certainly not made or
 * may have been. The details (host, driver message) stay in the log.
 */
export function fromDatabaseUnavailable(error: DatabaseUnavailableError, method: string): HttpError {
  const message = UNAVAILABLE_MESSAGES[isWriteMethod(method) ? error.writeOutcome : 'read'];
  return HttpError.of('service_unavailable_error', message, {
    headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
    cause: error,
  });
}
