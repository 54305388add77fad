import { LATEST_EXPIRY, type v2026_10_21 } from '@apikeys/api-types';
import { type PermissionQuery, PermissionQueryError, permissionQuery } from '@apikeys/permissions';
import { type Principal, rfc3339ToMicros } from '@apikeys/store';
import { invalidRequest } from '../../domain/errors.js';

type Schemas = v2026_10_21.components['schemas'];

/**
 * A datetime of a request (`field`) as microseconds; null stays null (for `expires_at`: never), undefined stays
 * undefined (unchanged, or no filter).
 */
export function microsOf<T extends string | null | undefined>(field: string, text: T): number | Exclude<T, string> {
  if (typeof text !== 'string') {
    return text as Exclude<T, string>;
  }
  const micros = rfc3339ToMicros(text);
  if (micros === undefined) {
    throw invalidRequest(field, 'must be an RFC 3339 datetime with a time zone, such as 2027-01-31T00:00:00Z');
  }
  return micros;
}

/** The latest expiry a request may set (`ExpiresAt.x-latest`), in microseconds. */
const LATEST_EXPIRY_MICROS = rfc3339ToMicros(LATEST_EXPIRY) as number;

/**
 * An `expires_at` of a request as microseconds (null: never; undefined: unchanged). Past the spec's latest expiry,
 * microseconds no longer fit a number exactly: such a value is refused before anything is written.
 */
export function expiresAtOf<T extends string | null | undefined>(text: T): number | Exclude<T, string> {
  const micros = microsOf('expires_at', text);
  if (typeof micros === 'number' && micros > LATEST_EXPIRY_MICROS) {
    throw invalidRequest('expires_at', `must be no later than ${LATEST_EXPIRY}`);
  }
  return micros;
}

/** An `ApiKeyPrincipal` of a request as the store's principal; none for null or undefined. */
export function principalOf(principal: Schemas['ApiKeyPrincipal'] | null | undefined): Principal | null {
  if (!principal) {
    return null;
  }
  return principal.type === 'user_actor'
    ? { type: 'user', id: principal.user_id }
    : { type: 'service_account', id: principal.service_account_id };
}

/**
 * A verification's permission requirement (`PermissionQuery`), parsed (each text once per process, then
 * remembered); undefined without one. A malformed query is refused with the position where it goes wrong.
 */
export function permissionRequirementOf(text: string | undefined): PermissionQuery | undefined {
  if (text === undefined) {
    return undefined;
  }
  try {
    return permissionQuery(text);
  } catch (error) {
    if (error instanceof PermissionQueryError) {
      throw invalidRequest('permissions', error.message);
    }
    throw error;
  }
}
