/**
 * A store call that missed its deadline (`timeoutMs`) on the client side, where pg's own timeouts do not say so: a
 * connection that came too late to leave any time for the statement, or a statement that failed because another
 * one on its pipelined connection missed the deadline and took the connection down with it.
 */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
}
