/** A bad argument the parser could not catch (an unknown organization, say): exit code 2, like a usage error. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A failure while running that the CLI has already put into words (the API refused a call, or could not be reached):
 * exit code 1. `hint`, when there is one, tells the user what to do about it.
 */
export class CommandError extends Error {
  override name = 'CommandError';
  readonly hint: string | undefined;

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
  }
}

/** Exit codes: 0 success, 1 failure while running, 2 bad usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
