import { API_VERSION } from '@apikeys/api-types';
import type { TextResponse } from './http.js';
import { authHeaders, type TestServer } from './in-process-server.js';

/** The version header in the form the typed client's `params.header` takes. */
export const VERSION_HEADER = { 'vendor-version': API_VERSION } as const;

/** The path of the list operation. */
export const API_KEYS_PATH = '/v1/organizations/api_keys';

/** The path of one API key, with its ID encoded. */
export function apiKeyPath(id: string): string {
  return `${API_KEYS_PATH}/${encodeURIComponent(id)}`;
}

/**
 * Headers of a raw JSON POST: admin key, version and `content-type: application/json`. An `undefined` in
 * `overrides` leaves that header out.
 */
export function jsonPostHeaders(
  adminKey: string,
  overrides: Record<string, string | undefined> = {},
): Record<string, string> {
  const headers: Record<string, string | undefined> = {
    ...authHeaders(adminKey, { 'content-type': 'application/json' }),
    ...overrides,
  };
  return Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * Sends a raw POST to the update operation, for bodies and headers the typed client cannot express. A string
 * body gets fetch's default `text/plain` content type unless the headers set one; a byte body gets none.
 */
export function postRaw(
  server: TestServer,
  id: string,
  body: string | Uint8Array | undefined,
  headers: Record<string, string>,
): Promise<TextResponse> {
  return server.request(apiKeyPath(id), { method: 'POST', headers, ...(body === undefined ? {} : { body }) });
}
