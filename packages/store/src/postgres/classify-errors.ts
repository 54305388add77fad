import pg from 'pg';
import type { UnavailableReason } from '../unavailable.js';
import { DeadlineError } from './deadline-error.js';

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

/** pg's own errors, which have no code, by their wording; the first that matches decides. */
const PG_MESSAGES: [RegExp, UnavailableReason][] = [
  // A statement not answered within its `query_timeout` (the client side of the deadline).
  [/^Query read timeout$/, 'timeout'],
  // pg: a connection not ready within `connectionTimeoutMillis`.
  [/^timeout expired$/, 'timeout'],
  // pg-pool: the same for a connection it opened, and a caller that waited as long for a free connection.
  [/^Connection terminated due to connection timeout|^timeout exceeded when trying to connect/, 'timeout'],
  // A connection that ended, or was ended by the store after it broke.
  [/^Connection terminated|^Client was closed|^Client has encountered a connection error/, 'unreachable'],
];

/** Whether a pg error means the database is unavailable (and why). */
export function classifyPostgresError(error: unknown): UnavailableReason | undefined {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return SQLSTATE_REASONS[code] ?? SQLSTATE_REASONS[code.slice(0, 2)];
  }
  if (!(error instanceof Error)) {
    return undefined;
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && NETWORK_CODES.has(code)) {
    return 'unreachable';
  }
  // A connection refused on every address of a host: an AggregateError of ECONNREFUSED errors.
  if (error instanceof AggregateError && error.errors.some((inner) => classifyPostgresError(inner) === 'unreachable')) {
    return 'unreachable';
  }
  if (error instanceof DeadlineError) {
    return 'timeout';
  }
  return PG_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
}
