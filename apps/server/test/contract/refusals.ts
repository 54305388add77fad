import type { ApiVersion } from '@apikeys/api-types';
import {
  authHeaders,
  type ExpectedError,
  expectError,
  expectInternalError,
  expectUnavailable,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError, type Store, type WriteOutcome } from '@apikeys/store';
import { expect, it, vi } from 'vitest';

/**
 * The refusals the operations on API keys share (401, 403, 413, 415, 429, 500, 503), each checked to change nothing,
 * in the API version the operation is sent with. An operation's contract test calls the one for each status inside
 * its `describe('<status> ... [<version>]')` block, once per version whose behaviour is the same.
 */
export interface RefusedOperation {
  operationId:
    | 'listApiKeys'
    | 'getApiKey'
    | 'updateApiKey'
    | 'createApiKey'
    | 'rotateApiKey'
    | 'verifyApiKey'
    | 'reportKeyUsage';
  /** The API version of every request. */
  version: ApiVersion;
  /** The server and the organization whose keys must not change. */
  context(): { server: TestServer; organizationId: string };
  /** The path of a request, made afresh for each case (a key to rotate, say). */
  path(server: TestServer, organizationId: string): Promise<string>;
  /** A valid JSON body: the operation is a POST. Without one, it is a GET. */
  body?: Record<string, unknown>;
  /** The store method a failing database fails. */
  storeMethod: keyof Store;
  /** A POST that only looks something up (verifyApiKey): an unavailable database certainly made no change. */
  lookup?: boolean;
}

/** Sends the operation with `credential` (none when undefined); `headers` add to or replace the usual ones. */
function send(
  operation: RefusedOperation,
  server: TestServer,
  path: string,
  credential: string | undefined,
  options: { headers?: Record<string, string | undefined>; body?: string | Uint8Array } = {},
) {
  const json: Record<string, string> = operation.body === undefined ? {} : { 'content-type': 'application/json' };
  const given: Record<string, string | undefined> = {
    'vendor-version': operation.version,
    ...json,
    ...options.headers,
  };
  // A header given as undefined is left out (a byte body then goes without a content-type: fetch adds none).
  const headers = authHeaders(
    credential ?? '',
    Object.fromEntries(Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined)),
  );
  if (credential === undefined) {
    delete headers['x-api-key'];
  }
  if (operation.body === undefined) {
    return server.request(path, { headers });
  }
  return server.request(path, { method: 'POST', headers, body: options.body ?? JSON.stringify(operation.body) });
}

/** Runs `act` and asserts that the organization's keys are exactly as before. */
async function expectNothingChanged(store: Store, organizationId: string, act: () => Promise<void>): Promise<void> {
  const before = await snapshotKeys(store, organizationId);
  await act();
  expect(await snapshotKeys(store, organizationId)).toEqual(before);
}

/** What a refusal of the operation looks like, checked against the document of its version. */
const refusal = (operation: RefusedOperation, expected: Omit<ExpectedError, 'operationId' | 'version'>) => ({
  ...expected,
  operationId: operation.operationId,
  version: operation.version,
});

/** 401: no admin key, an unknown one, a disabled one. */
export function refusesUnauthenticated(operation: RefusedOperation): void {
  it.each([
    ['no admin key', undefined, 'x-api-key header is required'],
    ['an unknown admin key', `sk-adm-${'A'.repeat(43)}`, 'invalid x-api-key'],
  ])('refuses %s and changes nothing', async (_, adminKey, message) => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(operation, server, path, adminKey);
      expectError(result, refusal(operation, { status: 401, type: 'authentication_error', message }));
    });
  });

  it('refuses a disabled admin key and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    const disabled = await server.store.createAdminKey({ organizationId, name: 'disabled' });
    await server.store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(operation, server, path, disabled.secret);
      const message = 'invalid x-api-key';
      expectError(result, refusal(operation, { status: 401, type: 'authentication_error', message }));
    });
  });
}

/** 403: a regular API key's secret in place of the admin key. */
export function refusesRegularKeys(operation: RefusedOperation): void {
  it('refuses a regular API key as the admin key and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    const { secret } = await server.store.createApiKey({
      organizationId,
      name: 'regular',
      createdBy: { id: 'user_refusals', type: 'user' },
    });
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(operation, server, path, secret);
      expectError(result, refusal(operation, { status: 403, type: 'permission_error', message: /admin key/ }));
    });
  });
}

/** 403: a verifier key, which may call verifyApiKey only. */
export function refusesVerifierKeys(operation: RefusedOperation): void {
  it('refuses a verifier key, which may only verify keys, and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    const { secret } = await server.store.createVerifierKey({ organizationId, name: 'gateway' });
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(operation, server, path, secret);
      const message =
        'a verifier key may only call the verification operations (POST /v1/keys/verify, GET /v1/keys/changes, POST /v1/keys/usage)';
      expectError(result, refusal(operation, { status: 403, type: 'permission_error', message }));
    });
  });
}

/** 413: a body over the spec's limit. */
export function refusesLargeBodies(operation: RefusedOperation, credential: () => string): void {
  it('refuses a body over 1 MiB and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const body = JSON.stringify({ ...operation.body, padding: 'x'.repeat(1024 * 1024) });
      const result = await send(operation, server, path, credential(), { body });
      const message = 'request body is larger than 1 MiB';
      expectError(result, refusal(operation, { status: 413, type: 'request_too_large', message }));
    });
  });
}

/** 415: a body that is not JSON, or is compressed. */
const NOT_JSON = 'content-type: the request body must be application/json';
const COMPRESSED = 'content-encoding: send the body uncompressed (identity)';

/**
 * 415: a body that is not JSON (another content-type, or none) is refused, also where the body is optional: the
 * server never answers as if it had not been sent.
 */
export function refusesOtherMediaTypes(operation: RefusedOperation, credential: () => string): void {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, NOT_JSON],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, NOT_JSON],
    ['no content-type', { 'content-type': undefined }, NOT_JSON],
    ['a compressed body', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, COMPRESSED],
  ])('refuses a body sent as %s with 415 and changes nothing', async (_, headers, message) => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const body = new TextEncoder().encode(JSON.stringify(operation.body));
      const result = await send(operation, server, path, credential(), { headers, body });
      expectError(result, refusal(operation, { status: 415, type: 'invalid_request_error', message }));
    });
  });
}

/** 429: a request past the admin key's budget. */
export function refusesOverBudget(operation: RefusedOperation): void {
  it('refuses a request over the admin key budget with retry-after, and changes nothing', async () => {
    const limited = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 0 } });
    try {
      const organization = await limited.createOrganization();
      const path = await operation.path(limited, organization.id);
      const spend = await limited.request('/v1/organizations/api_keys', {
        headers: authHeaders(organization.adminKey, { 'vendor-version': operation.version }),
      });
      expect(spend.response.status).toBe(200);
      await expectNothingChanged(limited.store, organization.id, async () => {
        const result = await send(operation, limited, path, organization.adminKey);
        const message = /^too many requests for this admin key/;
        expectError(result, refusal(operation, { status: 429, type: 'rate_limit_error', message }));
        expect(Number(result.response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(result.response.headers.get('ratelimit-remaining')).toBe('0');
      });
    } finally {
      await limited.close();
    }
  });
}

/** 503: the database is unavailable; `retry-after`, and the log says why. */
export function answersUnavailable(operation: RefusedOperation, credential: () => string): void {
  // A read has no outcome to be unsure of, nor has a lookup; a write was either certainly not made, or may have been.
  const outcomes: [string, WriteOutcome | undefined][] =
    operation.body === undefined
      ? [['a read', undefined]]
      : operation.lookup
        ? [['says nothing was changed (a lookup)', 'not_made']]
        : [
            ['says the change was not made (the lock was never obtained, no connection)', 'not_made'],
            ['says the change may have been made (sent, and no answer came)', 'unknown'],
          ];
  it.each(outcomes)('answers 503 with retry-after when the database is unavailable: %s', async (_, writeOutcome) => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const unavailable = new DatabaseUnavailableError('busy', 'the database is unavailable (busy): locked', {
        writeOutcome: writeOutcome ?? 'not_made',
      });
      vi.spyOn(server.store, operation.storeMethod).mockRejectedValueOnce(unavailable);
      const result = await send(operation, server, path, credential());
      vi.restoreAllMocks();
      expectUnavailable(server.logLines, result, operation.operationId, operation.version, writeOutcome);
    });
  });
}

/** 500: the store fails; a generic answer, and the details in the log only. */
export function answersInternalErrors(operation: RefusedOperation, credential: () => string): void {
  it('answers a generic error when the store fails, logs the details, and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      vi.spyOn(server.store, operation.storeMethod).mockRejectedValueOnce(new Error('boom: disk on fire'));
      const result = await send(operation, server, path, credential());
      vi.restoreAllMocks();
      expectInternalError(server.logLines, result, 'boom: disk on fire');
    });
  });
}
