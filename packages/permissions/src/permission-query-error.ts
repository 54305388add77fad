/** A malformed `PermissionQuery`: `reason`, at `position` (the 1-based index of the character where it goes wrong). */
export class PermissionQueryError extends Error {
  override readonly name = 'PermissionQueryError';

  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(`${reason} at position ${position}`);
  }
}
