import type pg from 'pg';

/** How long an idle connection stays silent before TCP keepalive starts probing its peer. */
const KEEPALIVE_IDLE_MS = 10_000;

/**
 * The pg options that bound opening a connection, for every connection the store opens: pg abandons a connection
 * that is not ready within `timeoutMs` (a stopped server refuses at once, but a frozen one accepts the TCP connection
 * and never answers), and pg-pool fails a caller that waited as long for a free connection. TCP keepalive lets an
 * idle connection to a host that vanished be found dead, instead of taking the next statement down with it.
 */
export function connectDeadline(timeoutMs: number): pg.ClientConfig {
  return { connectionTimeoutMillis: timeoutMs, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS };
}

/** The most by which the server's deadline precedes the client's: a tenth of the deadline, at most this. */
const SERVER_HEAD_START_MS = 100;

/**
 * The server side of a statement's deadline: PostgreSQL cancels a statement that runs longer (SQLSTATE 57014), a
 * lock wait included, so that no backend keeps working, or holding locks, for a caller that gave up. It needs a live
 * server: a frozen or unreachable one is left to the client-side timers (the store's own, `timeoutMs`). The
 * server's deadline is a little shorter, so that a live server's cancellation, a statement error that leaves the
 * connection usable, arrives before the client-side timer, which has to destroy the connection.
 */
export function serverStatementDeadline(timeoutMs: number): pg.ClientConfig {
  const headStart = Math.min(SERVER_HEAD_START_MS, Math.floor(timeoutMs / 10));
  return { statement_timeout: Math.max(1, timeoutMs - headStart) };
}
