/** Requests the checks of the fuzzer's invariants send or judge: valid ones, in either version, as data. */
import type { FuzzRequest } from './request.js';

/** The path of the API keys' collection. */
export const LIST = '/v1/organizations/api_keys';
/** The latest API version. */
export const LATEST = '2026-10-21';

/** A request of the fixture's credential (or another), version and body. */
export function request(
  method: string,
  target: string,
  options: { version?: string; credential?: string; body?: unknown; bearer?: boolean } = {},
): FuzzRequest {
  const { version = '2023-06-01', credential = '$ADMIN_KEY', body, bearer = false } = options;
  return {
    labels: ['test'],
    method,
    target,
    protocol: 'HTTP/1.1',
    headers: [
      ['host', '$HOST'],
      bearer ? ['authorization', `Bearer ${credential}`] : ['x-api-key', credential],
      ['vendor-version', version],
      ...(body === undefined ? [] : ([['content-type', 'application/json']] as [string, string][])),
    ],
    ...(body === undefined ? {} : { body: [{ text: JSON.stringify(body), encoding: 'utf8' as const }] }),
    framing: { kind: 'length' },
    modelled: true,
  };
}

/** A GET request (see `request`). */
export const get = (target: string, options: Parameters<typeof request>[2] = {}) => request('GET', target, options);
