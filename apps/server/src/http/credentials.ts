import type { IncomingHttpHeaders } from 'node:http';

/** The two headers an admin key may come in. */
export const API_KEY_HEADER = 'x-api-key';
export const AUTHORIZATION_HEADER = 'authorization';

/** `Bearer <token>`: the scheme in any letter case, then one or more spaces (RFC 9110, section 11.4). */
const BEARER = /^bearer +(\S+)$/i;

/** Where a request's admin key is, or why there is none to check. */
export type PresentedCredential =
  | { kind: 'key'; secret: string; header: typeof API_KEY_HEADER | typeof AUTHORIZATION_HEADER }
  | { kind: 'missing' }
  | { kind: 'not_bearer' };

/**
 * The admin key a request presents: in `x-api-key`, or as `Authorization: Bearer <key>`. `x-api-key` comes first:
 * when it holds a value, `Authorization` is not read at all (as before Bearer was accepted), so a proxy's or a
 * library's own `Authorization` cannot change which key a request uses. Without `x-api-key`, an `Authorization` of
 * another scheme than Bearer is refused.
 */
export function presentedCredential(headers: IncomingHttpHeaders): PresentedCredential {
  const apiKey = headers[API_KEY_HEADER];
  const fromApiKey = typeof apiKey === 'string' && apiKey !== '' ? apiKey : undefined;
  if (fromApiKey !== undefined) {
    return { kind: 'key', secret: fromApiKey, header: API_KEY_HEADER };
  }
  const authorization = headers[AUTHORIZATION_HEADER];
  const fromBearer = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  if (fromBearer !== undefined) {
    return { kind: 'key', secret: fromBearer, header: AUTHORIZATION_HEADER };
  }
  return authorization === undefined || authorization === '' ? { kind: 'missing' } : { kind: 'not_bearer' };
}

/** The 401 message for a request without a usable admin key. */
export const MISSING_CREDENTIAL_MESSAGES: Record<Exclude<PresentedCredential['kind'], 'key'>, string> = {
  missing: 'x-api-key header is required',
  not_bearer: 'authorization: only the Bearer scheme is accepted (Authorization: Bearer <admin key>)',
};
