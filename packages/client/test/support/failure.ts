import { expect } from 'vitest';
import { ApiKeysError } from '../../src/index.js';

/** Awaits a rejection and returns the error, which must be an ApiKeysError. */
export async function failure(pending: Promise<unknown>): Promise<ApiKeysError> {
  const error = await pending.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiKeysError);
  return error as ApiKeysError;
}
