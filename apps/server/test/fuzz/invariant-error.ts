/** A broken invariant: `invariant` names it, the message says what was seen. */
export class InvariantError extends Error {
  override name = 'InvariantError';

  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}
