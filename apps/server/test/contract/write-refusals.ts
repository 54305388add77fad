import { type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  expectError,
  expectInternalError,
  expectUnavailable,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError, type Store } from '@apikeys/store';
import { expect, it, vi } from 'vitest';

/**
 * The refusals every POST operation of the latest version shares (401, 403, 413, 415, 429, 500, 503), each checked
 * to change nothing. An operation's contract test calls the one for each status inside its `describe('<status> ...')`
 * block, with how to send the operation.
 */
export interface WriteOperation {
  operationId: 'createApiKey' | 'updateApiKey' | 'rotateApiKey' | 'verifyApiKey';
  /** The server and the organization whose keys must not change. */
  context(): { server: TestServer; organizationId: string };
  /** The path of a request, made afresh for each case (a key to rotate, say). */
  path(server: TestServer, organizationId: string): Promise<string>;
  /** A valid JSON body. */
  body: Record<string, unknown>;
  /** The store method a failing database fails. */
  storeMethod: keyof Store;
  /** The API version of the requests; the latest when not given. */
  version?: ApiVersion;
}

const VERSION = LATEST_API_VERSION;

/** A POST of `body`; a byte body goes without a content-type unless the headers give one (fetch adds none). */
async function send(server: TestServer, path: string, headers: Record<string, string>, body: string | Uint8Array) {
  return server.request(path, { method: 'POST', headers, body });
}

/** Runs `act` and asserts that the organization's keys are exactly as before. */
async function expectNothingChanged(store: Store, organizationId: string, act: () => Promise<void>): Promise<void> {
  const before = await snapshotKeys(store, organizationId);
  await act();
  expect(await snapshotKeys(store, organizationId)).toEqual(before);
}

const jsonHeaders = (adminKey: string, version: ApiVersion = VERSION) =>
  authHeaders(adminKey, { 'vendor-version': version, 'content-type': 'application/json' });

export function refusesUnauthenticated(operation: WriteOperation): void {
  it.each([
    ['no admin key', undefined, 'x-api-key header is required'],
    ['an unknown admin key', `sk-adm-${'A'.repeat(43)}`, 'invalid x-api-key'],
  ])('refuses %s and changes nothing', async (_, adminKey, message) => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    const headers = jsonHeaders(adminKey ?? '');
    if (adminKey === undefined) {
      delete headers['x-api-key'];
    }
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(server, path, headers, JSON.stringify(operation.body));
      expectError(result, {
        operationId: operation.operationId,
        status: 401,
        type: 'authentication_error',
        message,
        version: VERSION,
      });
    });
  });
}

export function refusesRegularKeys(operation: WriteOperation): void {
  it('refuses a regular API key as the admin key and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    const { secret } = await server.store.createApiKey({
      organizationId,
      name: 'regular',
      createdBy: { id: 'user_refusals', type: 'user' },
    });
    await expectNothingChanged(server.store, organizationId, async () => {
      const result = await send(server, path, jsonHeaders(secret), JSON.stringify(operation.body));
      expectError(result, {
        operationId: operation.operationId,
        status: 403,
        type: 'permission_error',
        message: /admin key/,
        version: VERSION,
      });
    });
  });
}

export function refusesLargeBodies(operation: WriteOperation, adminKey: () => string): void {
  it('refuses a body over 1 MiB and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const body = JSON.stringify({ ...operation.body, padding: 'x'.repeat(1024 * 1024) });
      const result = await send(server, path, jsonHeaders(adminKey()), body);
      expectError(result, {
        operationId: operation.operationId,
        status: 413,
        type: 'request_too_large',
        message: 'request body is larger than 1 MiB',
        version: VERSION,
      });
    });
  });
}

const NOT_JSON = 'content-type: the request body must be application/json';
const COMPRESSED = 'content-encoding: send the body uncompressed (identity)';

/**
 * A body that is not JSON (another content-type, or none) is refused with 415, also where the body is optional: the
 * server never answers as if it had not been sent.
 */
export function refusesOtherMediaTypes(operation: WriteOperation, adminKey: () => string): void {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, NOT_JSON],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, NOT_JSON],
    ['no content-type', { 'content-type': undefined }, NOT_JSON],
    ['a compressed body', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, COMPRESSED],
  ])('refuses a body sent as %s with 415 and changes nothing', async (_, extra, message) => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const headers = Object.fromEntries(
        Object.entries({ ...jsonHeaders(adminKey(), operation.version), ...extra }).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      );
      const body = new TextEncoder().encode(JSON.stringify(operation.body));
      const result = await send(server, path, headers, body);
      expectError(result, {
        operationId: operation.operationId,
        status: 415,
        type: 'invalid_request_error',
        message,
        version: operation.version ?? VERSION,
      });
    });
  });
}

export function refusesOverBudget(operation: WriteOperation): void {
  it('refuses a request over the admin key budget with retry-after, and changes nothing', async () => {
    const limited = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 0 } });
    try {
      const organization = await limited.createOrganization();
      const path = await operation.path(limited, organization.id);
      const headers = jsonHeaders(organization.adminKey);
      expect((await limited.request('/v1/organizations/api_keys', { headers })).response.status).toBe(200);
      await expectNothingChanged(limited.store, organization.id, async () => {
        const result = await send(limited, path, headers, JSON.stringify(operation.body));
        expectError(result, {
          operationId: operation.operationId,
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this admin key/,
          version: VERSION,
        });
        expect(Number(result.response.headers.get('retry-after'))).toBeGreaterThan(0);
      });
    } finally {
      await limited.close();
    }
  });
}

export function answersUnavailable(operation: WriteOperation, adminKey: () => string): void {
  it('answers 503 with retry-after when the database is unavailable, says the outcome is unknown', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      const unavailable = new DatabaseUnavailableError('busy', 'the database is unavailable (busy): locked');
      vi.spyOn(server.store, operation.storeMethod).mockRejectedValueOnce(unavailable);
      const result = await send(server, path, jsonHeaders(adminKey()), JSON.stringify(operation.body));
      vi.restoreAllMocks();
      expectUnavailable(server.logLines, result, operation.operationId, VERSION);
    });
    const requestIds = server.logLines
      .map((text) => JSON.parse(text))
      .filter((entry) => entry.msg === 'database unavailable');
    expect(requestIds.at(-1)).toMatchObject({ write_outcome: 'unknown' });
  });
}

export function answersInternalErrors(operation: WriteOperation, adminKey: () => string): void {
  it('answers a generic error when the store fails, logs the details, and changes nothing', async () => {
    const { server, organizationId } = operation.context();
    const path = await operation.path(server, organizationId);
    await expectNothingChanged(server.store, organizationId, async () => {
      vi.spyOn(server.store, operation.storeMethod).mockRejectedValueOnce(new Error('boom: disk on fire'));
      const result = await send(server, path, jsonHeaders(adminKey()), JSON.stringify(operation.body));
      vi.restoreAllMocks();
      expectInternalError(server.logLines, result, 'boom: disk on fire');
    });
  });
}
