import pg from 'pg';
import type { Unavailability, UnavailableReason } from '../unavailable.js';
import { ClientSideError, ConnectionLostError, DeadlineError } from './client-errors.js';

/** Socket errors of a connection that could not be made or broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  // A statement written to a connection that was just destroyed or ended (a deadline, a server restart).
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/** Socket errors that only connecting raises: nothing was sent. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLSTATE codes, or their two-character classes, that mean PostgreSQL cannot serve work now. */
const SQLSTATE_REASONS: Record<string, UnavailableReason> = {
  // Class 08: connection exception.
  '08': 'unreachable',
  // query_canceled: statement_timeout (the deadline) or a cancel request.
  '57014': 'timeout',
  // admin_shutdown, crash_shutdown, cannot_connect_now (starting up or shutting down).
  '57P01': 'busy',
  '57P02': 'busy',
  '57P03': 'busy',
  // too_many_connections.
  '53300': 'busy',
  // read_only_sql_transaction: a standby, or default_transaction_read_only.
  '25006': 'read_only',
  // disk_full.
  '53100': 'full',
  // Class 58: system error (I/O errors).
  '58': 'io_error',
};

/** SQLSTATE codes PostgreSQL sends only when it refuses a new connection: cannot_connect_now, too_many_connections. */
const REFUSED_CONNECTION_CODES = new Set(['57P03', '53300']);

/** Why a pg error means the database is unavailable: by SQLSTATE, by the store's own error classes, by socket code. */
function reasonOf(error: unknown): UnavailableReason | undefined {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return SQLSTATE_REASONS[code] ?? SQLSTATE_REASONS[code.slice(0, 2)];
  }
  if (error instanceof DeadlineError) {
    return 'timeout';
  }
  if (error instanceof ConnectionLostError) {
    return 'unreachable';
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (error instanceof Error && code !== undefined && NETWORK_CODES.has(code)) {
    return 'unreachable';
  }
  // A connection refused on every address of a host: an AggregateError of ECONNREFUSED errors.
  if (error instanceof AggregateError && error.errors.some((inner) => reasonOf(inner) === 'unreachable')) {
    return 'unreachable';
  }
  return undefined;
}

/**
 * Whether a write that failed with this error was certainly not made: PostgreSQL refused its statement (an ERROR rolls
 * its transaction back) or the connection; or the store knows the statement was never sent. Otherwise a statement
 * that commits was sent and no answer came: it may have committed.
 */
function certainlyNotMade(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    return error.severity === 'ERROR' || REFUSED_CONNECTION_CODES.has(error.code ?? '');
  }
  if (error instanceof ClientSideError) {
    return !error.statementSent;
  }
  if (error instanceof AggregateError) {
    return error.errors.length > 0 && error.errors.every(certainlyNotMade);
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code !== undefined && CONNECT_CODES.has(code);
}

/**
 * Whether a pg error means the database is unavailable, why, and what a write it ended did. No pg error is told by
 * its message: PostgreSQL's by SQLSTATE, the driver's timeouts and lost connections by the store's own classes
 * (DeadlineError, ConnectionLostError), socket errors by Node's code.
 */
export function classifyPostgresError(error: unknown): Unavailability | undefined {
  const reason = reasonOf(error);
  return reason && { reason, writeOutcome: certainlyNotMade(error) ? 'not_made' : 'unknown' };
}
