import type { ApiKeyRecord } from './types.js';

/**
 * An update that would change the status (to `active` or `inactive`) or the expiry of a key whose expiry has passed:
 * an expired key can only be renamed or archived. The store decides it in the statement that would change the key,
 * against the clock read under the key's lock, and changes nothing.
 */
export class ExpiredApiKeyError extends Error {
  override name = 'ExpiredApiKeyError';

  /** `key`: the key as read after the refusal. */
  constructor(readonly key: ApiKeyRecord) {
    super(`the API key ${key.id} has expired; an expired key can only be renamed or archived`);
  }
}
