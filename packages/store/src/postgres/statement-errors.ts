import pg from 'pg';

/**
 * Whether an error leaves the connection usable: only an error the server raised for the statement itself does (a
 * constraint, a cancelled statement, `statement_timeout`). A socket error, a client-side deadline, or a FATAL error
 * (the server shutting down, an administrator terminating the backend) ends the connection, possibly after more
 * statements were already sent on it.
 */
export function isStatementError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.severity === 'ERROR';
}
