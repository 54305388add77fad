import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  apiKeyPath,
  authHeaders,
  expectError,
  expectMatchesSpec,
  snapshotKeys,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { hashSecret, nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesLargeBodies,
  refusesOtherMediaTypes,
  refusesOverBudget,
  refusesRegularKeys,
  refusesUnauthenticated,
  refusesVerifierKeys,
} from './refusals.js';

const VERSION = LATEST_API_VERSION;
const SECOND = 1_000_000;

/** Microseconds since the epoch of an RFC 3339 time the API returned. */
const micros = (text: string) => Date.parse(text) * 1000 + Number(text.slice(23, 26));

// From 2026-10-21 on.
describe('rotateApiKey', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('rotate tests');
  });
  afterAll(() => server.close());

  const headers = (extra: Record<string, string> = {}) =>
    authHeaders(org.adminKey, { 'vendor-version': VERSION, ...extra });

  async function createKey(body: Record<string, unknown>) {
    const { body: created } = await server.request('/v1/organizations/api_keys', {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    return created as { id: string; key: string; expires_at: string | null };
  }

  async function rotate(id: string, body?: unknown) {
    const result = await server.request(`${apiKeyPath(id)}/rotate`, {
      method: 'POST',
      headers: body === undefined ? headers() : headers({ 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expectMatchesSpec('rotateApiKey', result.response, result.body, VERSION);
    return result;
  }

  async function get(id: string) {
    return (await server.request(apiKeyPath(id), { headers: headers() })).body as Record<string, unknown>;
  }

  describe('200 the new key with its secret, and the old key as it now is [2026-10-21]', () => {
    it('replaces a key at once by default: a new ID and secret, the same name, scope, principal and expiry', async () => {
      const expiresAt = '2099-06-01T00:00:00.000000Z';
      const old = await createKey({
        name: 'leaked',
        workspace_id: 'wrkspc_rotate',
        expires_at: expiresAt,
        principal: { type: 'user_actor', user_id: 'user_bob' },
      });
      const before = nowMicros();

      const { response, body } = await rotate(old.id);
      const after = nowMicros();
      const rotated = body as Record<string, unknown> & { rotated_api_key: Record<string, unknown>; key: string };

      expect(response.status).toBe(200);
      expect(rotated.id).not.toBe(old.id);
      expect(rotated.key).not.toBe(old.key);
      expect(rotated).toMatchObject({
        name: 'leaked',
        scope: { type: 'workspace', workspace_id: 'wrkspc_rotate' },
        principal: { type: 'user_actor', user_id: 'user_bob' },
        expires_at: expiresAt,
        status: 'active',
        created_by: { type: 'service_account', id: org.adminKeyId },
      });
      expect(rotated.rotated_api_key).toMatchObject({ id: old.id, status: 'expired' });
      const oldExpiry = micros(rotated.rotated_api_key.expires_at as string);
      expect(oldExpiry).toBeGreaterThanOrEqual(before);
      expect(oldExpiry).toBeLessThanOrEqual(after);
      expect(await get(old.id)).toEqual(rotated.rotated_api_key);
      expect(await server.store.findCredential(hashSecret(rotated.key))).toEqual({
        kind: 'api_key',
        organizationId: org.id,
      });
      const { key: _secret, rotated_api_key: _old, ...newKey } = rotated;
      expect(await get(rotated.id as string)).toEqual(newKey);
      for (const line of server.logLines) {
        expect(line).not.toContain(rotated.key);
      }
    });

    it('keeps the old key working for the grace period', async () => {
      const old = await createKey({ name: 'graceful' });
      const before = nowMicros();

      const { body } = await rotate(old.id, { grace_period_seconds: 3600 });
      const previous = (body as { rotated_api_key: { expires_at: string; status: string } }).rotated_api_key;

      expect(previous.status).toBe('active');
      expect(micros(previous.expires_at)).toBeGreaterThanOrEqual(before + 3600 * SECOND);
      expect(micros(previous.expires_at)).toBeLessThanOrEqual(nowMicros() + 3600 * SECOND);
    });

    it('never extends an old key that already expires sooner than the grace period', async () => {
      const soon = new Date(Date.now() + 60_000).toISOString().replace('Z', '000Z');
      const old = await createKey({ name: 'short-lived', expires_at: soon });

      const { body } = await rotate(old.id, { grace_period_seconds: 604800 });

      expect((body as { rotated_api_key: { expires_at: string } }).rotated_api_key.expires_at).toBe(old.expires_at);
    });

    it('rotates an inactive key into an active one', async () => {
      const old = await createKey({ name: 'switched off' });
      await server.request(apiKeyPath(old.id), {
        method: 'POST',
        headers: headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ status: 'inactive' }),
      });

      const { body } = await rotate(old.id, {});

      expect(body).toMatchObject({ status: 'active', rotated_api_key: { id: old.id, status: 'expired' } });
    });
    it.each([
      ['content-length 0 without a content-type', {}, new Uint8Array(0)],
      ['content-length 0 with a JSON content-type', { 'content-type': 'application/json' }, ''],
      [
        'an empty chunked JSON body',
        { 'content-type': 'application/json' },
        new ReadableStream({ start: (controller) => controller.close() }),
      ],
    ])('takes an empty body (%s) as no body, and rotates at once', async (_, extra, body) => {
      const old = await createKey({ name: 'empty body' });

      const result = await server.request(`${apiKeyPath(old.id)}/rotate`, {
        method: 'POST',
        headers: headers(extra),
        body,
        duplex: 'half',
      } as RequestInit);

      expect(result.response.status, result.text).toBe(200);
      expectMatchesSpec('rotateApiKey', result.response, result.body, VERSION);
      expect(result.body).toMatchObject({ rotated_api_key: { id: old.id, status: 'expired' } });
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    const invalid = (message: RegExp | string) =>
      ({ operationId: 'rotateApiKey', status: 400, type: 'invalid_request_error', message, version: VERSION }) as const;

    it('an archived key', async () => {
      const old = await createKey({ name: 'archived' });
      await server.request(apiKeyPath(old.id), {
        method: 'POST',
        headers: headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ status: 'archived' }),
      });
      const before = await snapshotKeys(server.store, org.id);

      expectError(await rotate(old.id), invalid(/^api_key_id: the key is archived/));
      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it('an expired key', async () => {
      const old = await createKey({ name: 'rotated twice' });
      await rotate(old.id);
      const before = await snapshotKeys(server.store, org.id);

      expectError(await rotate(old.id), invalid(/^api_key_id: the key is expired/));
      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it.each([
      ['a negative grace period', { grace_period_seconds: -1 }],
      ['a grace period over 7 days', { grace_period_seconds: 604801 }],
      ['a fractional grace period', { grace_period_seconds: 1.5 }],
      ['an unknown field', { grace: 10 }],
    ])('%s', async (_, body) => {
      const old = await createKey({ name: 'bad body' });
      const before = await snapshotKeys(server.store, org.id);

      expectError(await rotate(old.id, body), invalid(/grace/));
      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it('a request of version 2023-06-01, naming the version that introduced rotation', async () => {
      const old = await createKey({ name: 'old client' });

      const result = await server.request(`${apiKeyPath(old.id)}/rotate`, {
        method: 'POST',
        headers: authHeaders(org.adminKey),
      });

      expectError(result, {
        operationId: undefined,
        status: 400,
        type: 'invalid_request_error',
        message: 'vendor-version: rotateApiKey is available from API version 2026-10-21; this request uses 2023-06-01',
      });
      expect(await get(old.id)).toMatchObject({ status: 'active', expires_at: null });
    });
  });

  describe('404 not_found_error [2026-10-21]', () => {
    it("an unknown key, or another organization's, is a 404", async () => {
      const other = await server.createOrganization('someone else');
      const theirs = (
        await server.request('/v1/organizations/api_keys', {
          method: 'POST',
          headers: authHeaders(other.adminKey, { 'vendor-version': VERSION, 'content-type': 'application/json' }),
          body: JSON.stringify({ name: 'theirs' }),
        })
      ).body as { id: string };

      for (const id of [theirs.id, 'apikey_000000000000000000000000']) {
        expectError(await rotate(id), {
          operationId: 'rotateApiKey',
          status: 404,
          type: 'not_found_error',
          message: `api_key_id: no API key with ID ${id}`,
          version: VERSION,
        });
      }
      expect(
        (await server.request(apiKeyPath(theirs.id), { headers: authHeaders(other.adminKey) })).body,
      ).toMatchObject({ status: 'active' });
    });
  });

  const operation: RefusedOperation = {
    version: VERSION,
    operationId: 'rotateApiKey',
    context: () => ({ server, organizationId: org.id }),
    path: async (target, organizationId) => {
      const { apiKey } = await target.store.createApiKey({
        organizationId,
        name: 'to rotate',
        createdBy: { id: 'user_rotate', type: 'user' },
      });
      return `${apiKeyPath(apiKey.id)}/rotate`;
    },
    body: { grace_period_seconds: 60 },
    storeMethod: 'rotateApiKey',
  };
  const adminKey = () => org.adminKey;

  describe('401 authentication_error [2026-10-21]', () => refusesUnauthenticated(operation));
  describe('403 permission_error [2026-10-21]', () => {
    refusesRegularKeys(operation);
    refusesVerifierKeys(operation);
  });
  describe('413 request_too_large [2026-10-21]', () => refusesLargeBodies(operation, adminKey));
  describe('415 invalid_request_error (unsupported media type) [2026-10-21]', () =>
    refusesOtherMediaTypes(operation, adminKey));
  describe('429 rate_limit_error [2026-10-21]', () => refusesOverBudget(operation));
  describe('500 api_error [2026-10-21]', () => answersInternalErrors(operation, adminKey));
  describe('503 service_unavailable_error [2026-10-21]', () => answersUnavailable(operation, adminKey));
});
