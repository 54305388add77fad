/** A bad argument the parser could not catch (an unknown organization, say): exit code 2, like a usage error. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Exit codes: 0 success, 1 failure while running, 2 bad usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
