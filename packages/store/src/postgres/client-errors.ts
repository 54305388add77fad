/** Whether the statement of a failed call had been sent to the database: if so, and it wrote, it may have committed. */
export interface SentStatement {
  statementSent: boolean;
  cause?: unknown;
}

/** A failure the store saw happen on the client side of a call (below), which knows whether its statement was sent. */
export abstract class ClientSideError extends Error {
  readonly statementSent: boolean;

  constructor(message: string, { statementSent, cause }: SentStatement) {
    super(message, { cause });
    this.statementSent = statementSent;
  }
}

/**
 * A store call that missed its deadline (`timeoutMs`) on the client side: no connection in time (nothing was sent),
 * or no answer in time to a statement that was sent, on this connection or on a pipelined one that another statement's
 * missed deadline took down. The store raises it from its own timers, so that it is told apart by its class, never by
 * the driver's wording.
 */
export class DeadlineError extends ClientSideError {
  override name = 'DeadlineError';
}

/**
 * A connection that could not be made, or that the store saw end or fail (a server restart, a terminated backend, a
 * broken socket), around the driver's error (`cause`): the pipeline and the pool raise it when the connection's own
 * 'error' or 'end' event came, so that it is told apart by its class, never by the driver's wording.
 */
export class ConnectionLostError extends ClientSideError {
  override name = 'ConnectionLostError';
}
