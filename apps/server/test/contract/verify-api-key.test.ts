import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  authHeaders,
  expectError,
  expectMatchesSpec,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { hashSecret, nowMicros } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesFailingAddresses,
  refusesLargeBodies,
  refusesOtherMediaTypes,
  refusesRegularKeys,
  refusesUnauthenticated,
} from './refusals.js';

const VERSION = LATEST_API_VERSION;
const VERIFY_PATH = '/v1/keys/verify';
const HOUR = 3_600_000_000;

// From 2026-10-21 on.
describe('verifyApiKey', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let verifierKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('verify tests');
    ({ secret: verifierKey } = await server.store.createVerifierKey({ organizationId: org.id, name: 'gateway' }));
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const jsonHeaders = (credential: string) =>
    authHeaders(credential, { 'vendor-version': VERSION, 'content-type': 'application/json' });

  async function verify(key: unknown, credential = verifierKey) {
    const result = await server.request(VERIFY_PATH, {
      method: 'POST',
      headers: jsonHeaders(credential),
      body: JSON.stringify({ key }),
    });
    if (result.response.status === 200) {
      expectMatchesSpec('verifyApiKey', result.response, result.body, VERSION);
    }
    return result;
  }

  async function newKey(fields: { name?: string; expiresAt?: number | null } = {}) {
    return server.store.createApiKey({
      organizationId: org.id,
      name: fields.name ?? 'verified key',
      createdBy: { type: 'user', id: 'user_alice' },
      expiresAt: fields.expiresAt ?? null,
    });
  }

  const operation: RefusedOperation = {
    version: VERSION,
    operationId: 'verifyApiKey',
    context: () => ({ server, organizationId: org.id }),
    path: async () => VERIFY_PATH,
    body: { key: `sk-api-${'A'.repeat(43)}` },
    storeMethod: 'findApiKeyBySecretHash',
    lookup: true,
  };

  describe('200 the verdict, and the key when it is one of the organization [2026-10-21]', () => {
    it('says an active key is valid and which key it is, with a verifier key: never its secret or hash', async () => {
      const { apiKey, secret } = await newKey({ name: 'checkout service' });
      const workspace = (await server.store.getOrganization(org.id))?.defaultWorkspaceId;

      const { response, body, text } = await verify(secret);

      expect(response.status).toBe(200);
      expect(body).toEqual({
        valid: true,
        code: 'VALID',
        key: {
          id: apiKey.id,
          type: 'api_key',
          organization_id: org.id,
          name: 'checkout service',
          scope: { type: 'workspace', workspace_id: workspace },
          principal: null,
          expires_at: null,
          status: 'active',
          permissions: [],
          metadata: {},
        },
      });
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hashSecret(secret));
      expect(response.headers.get('ratelimit-limit')).toBeNull();
    });

    it('answers an admin key of the organization the same as a verifier key', async () => {
      const { secret } = await newKey();

      const byAdmin = await verify(secret, org.adminKey);
      const byVerifier = await verify(secret);

      expect(byAdmin.body).toEqual(byVerifier.body);
      expect(byAdmin.body).toMatchObject({ valid: true, code: 'VALID' });
    });

    it.each([
      ['inactive', 'INACTIVE'],
      ['archived', 'ARCHIVED'],
    ] as const)('says a key that is %s is not valid, and why', async (status, code) => {
      const { apiKey, secret } = await newKey();
      await server.store.updateApiKey(org.id, apiKey.id, { status });

      const { body } = await verify(secret);

      expect(body).toMatchObject({ valid: false, code, key: { id: apiKey.id, status } });
    });

    it('says a key past its expiry is EXPIRED, and one that expires later is VALID', async () => {
      const expired = await newKey({ expiresAt: nowMicros() - HOUR });
      const later = await newKey({ expiresAt: nowMicros() + HOUR });

      expect((await verify(expired.secret)).body).toMatchObject({ valid: false, code: 'EXPIRED' });
      expect((await verify(later.secret)).body).toMatchObject({ valid: true, code: 'VALID' });
    });

    it('follows a rotation: the new key is valid, the old one until the end of its grace period only', async () => {
      const old = await newKey();
      const inGrace = await newKey();
      const rotate = (id: string, grace: number) =>
        server.request(`${API_KEYS_PATH}/${id}/rotate`, {
          method: 'POST',
          headers: jsonHeaders(org.adminKey),
          body: JSON.stringify({ grace_period_seconds: grace }),
        });

      const rotated = (await rotate(old.apiKey.id, 0)).body as { key: string };
      await rotate(inGrace.apiKey.id, 3600);

      expect((await verify(old.secret)).body).toMatchObject({ valid: false, code: 'EXPIRED' });
      expect((await verify(rotated.key)).body).toMatchObject({ valid: true, code: 'VALID' });
      expect((await verify(inGrace.secret)).body).toMatchObject({ valid: true, code: 'VALID' });
    });

    it('answers a key of another organization exactly like an unknown secret', async () => {
      const other = await server.createOrganization('another organization');
      const { secret } = await server.store.createApiKey({
        organizationId: other.id,
        name: 'not yours',
        createdBy: { type: 'user', id: 'user_bob' },
      });
      const unknown = `sk-api-${'Z'.repeat(43)}`;

      const theirs = await verify(secret);
      const none = await verify(unknown);

      expect(theirs.body).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
      expect(none.body).toEqual(theirs.body);
    });

    it.each([
      ['a mistyped checksum', (secret: string) => `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`],
      ['the admin key itself', () => org.adminKey],
      ['the verifier key itself', () => verifierKey],
      ['no form this service issues', () => 'hunter2'],
    ])('answers %s as NOT_FOUND without looking it up', async (_, secretOf) => {
      const { secret } = await newKey();
      const lookup = vi.spyOn(server.store, 'findApiKeyBySecretHash');

      const { body } = await verify(secretOf(secret));

      expect(body).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
      expect(lookup).not.toHaveBeenCalled();
    });

    it("records the key's last use, to the minute, once the uses are written; never for an invalid key", async () => {
      const { apiKey, secret } = await newKey({ name: 'used' });
      const { apiKey: inactive, secret: inactiveSecret } = await newKey({ name: 'not valid' });
      await server.store.updateApiKey(org.id, inactive.id, { status: 'inactive' });
      const before = nowMicros();

      await verify(secret);
      const after = nowMicros();
      await verify(inactiveSecret);
      const unwritten = (await server.store.getApiKey(org.id, apiKey.id))?.lastUsedAt;
      await server.flushKeyUsage();
      const { body } = await server.request(`${API_KEYS_PATH}/${apiKey.id}`, { headers: jsonHeaders(org.adminKey) });
      const lastUsedAt = Date.parse((body as { last_used_at: string }).last_used_at) * 1000;

      expect(unwritten).toBeNull();
      expect(lastUsedAt % 60_000_000).toBe(0);
      expect(lastUsedAt).toBeGreaterThan(before - 60_000_000);
      expect(lastUsedAt).toBeLessThanOrEqual(after);
      expect((await server.store.getApiKey(org.id, inactive.id))?.lastUsedAt).toBeNull();
    });

    it('takes nothing from the rate limit of its caller', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const organization = await limited.createOrganization();
        const { secret } = await limited.store.createApiKey({
          organizationId: organization.id,
          name: 'busy gateway',
          createdBy: { type: 'user', id: 'user_alice' },
        });
        const send = () =>
          limited.request(VERIFY_PATH, {
            method: 'POST',
            headers: jsonHeaders(organization.adminKey),
            body: JSON.stringify({ key: secret }),
          });

        const statuses = [];
        for (let n = 0; n < 5; n++) {
          statuses.push((await send()).response.status);
        }
        const list = await limited.request(API_KEYS_PATH, { headers: jsonHeaders(organization.adminKey) });

        expect(statuses).toEqual([200, 200, 200, 200, 200]);
        expect(list.response.status).toBe(200);
        expect(list.response.headers.get('ratelimit-remaining')).toBe('0');
      } finally {
        await limited.close();
      }
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    it.each([
      ['no key', {}, /^key: must have required property 'key'/],
      ['an empty key', { key: '' }, /^key: /],
      ['a key over 1,024 characters', { key: 'x'.repeat(1025) }, /^key: /],
      ['a key that is not a string', { key: 42 }, /^key: /],
      ['a key with a NUL character', { key: 'sk-api-\u0000' }, /^key: /],
      ['an unknown field', { key: 'sk-api-x', extra: true }, /extra/],
    ])('refuses %s', async (_, body, message) => {
      const lookup = vi.spyOn(server.store, 'findApiKeyBySecretHash');

      const result = await server.request(VERIFY_PATH, {
        method: 'POST',
        headers: jsonHeaders(verifierKey),
        body: JSON.stringify(body),
      });

      expectError(result, {
        operationId: 'verifyApiKey',
        status: 400,
        type: 'invalid_request_error',
        message,
        version: VERSION,
      });
      expect(lookup).not.toHaveBeenCalled();
    });

    it('refuses a request of an API version before 2026-10-21, naming the version that introduced it', async () => {
      const { secret } = await newKey();

      const result = await server.request(VERIFY_PATH, {
        method: 'POST',
        headers: authHeaders(verifierKey, { 'vendor-version': '2023-06-01', 'content-type': 'application/json' }),
        body: JSON.stringify({ key: secret }),
      });

      expect(result.response.status).toBe(400);
      expect(result.body).toMatchObject({
        error: { message: expect.stringMatching(/verifyApiKey is available from API version 2026-10-21/) },
      });
    });
  });

  describe('401 authentication_error [2026-10-21]', () => {
    refusesUnauthenticated(operation);

    it('refuses a disabled verifier key', async () => {
      const { verifierKey: disabled, secret } = await server.store.createVerifierKey({
        organizationId: org.id,
        name: 'retired gateway',
      });
      await server.store.setVerifierKeyStatus(disabled.id, 'disabled');

      const result = await verify(`sk-api-${'A'.repeat(43)}`, secret);

      expectError(result, {
        operationId: 'verifyApiKey',
        status: 401,
        type: 'authentication_error',
        message: 'invalid x-api-key',
        version: VERSION,
      });
    });
  });

  describe('403 permission_error [2026-10-21]', () => {
    refusesRegularKeys(operation);

    it.each([
      ['GET', API_KEYS_PATH, undefined],
      ['POST', API_KEYS_PATH, { name: 'made by a verifier' }],
      ['GET', '/v1/organizations/audit_events', undefined],
    ])('refuses a verifier key on every other operation: %s %s', async (method, path, body) => {
      const before = await server.store.listApiKeys({ organizationId: org.id, limit: 1000 });

      const result = await server.request(path, {
        method,
        headers: jsonHeaders(verifierKey),
        ...(body ? { body: JSON.stringify(body) } : {}),
      });

      expect(result.response.status).toBe(403);
      expect(result.body).toMatchObject({
        type: 'error',
        error: {
          type: 'permission_error',
          message:
            'a verifier key may only call the verification operations (POST /v1/keys/verify, GET /v1/keys/changes, POST /v1/keys/usage)',
        },
      });
      expect(await server.store.listApiKeys({ organizationId: org.id, limit: 1000 })).toEqual(before);
    });

    it('refuses a verifier key on the operations with a key in their path, before looking the key up', async () => {
      const { apiKey } = await newKey();
      const lookup = vi.spyOn(server.store, 'getApiKey');

      for (const [method, path] of [
        ['GET', `${API_KEYS_PATH}/${apiKey.id}`],
        ['POST', `${API_KEYS_PATH}/${apiKey.id}`],
        ['POST', `${API_KEYS_PATH}/${apiKey.id}/rotate`],
      ] as const) {
        const result = await server.request(path, {
          method,
          headers: jsonHeaders(verifierKey),
          ...(method === 'POST' ? { body: JSON.stringify(path.endsWith('rotate') ? {} : { name: 'x' }) } : {}),
        });
        expect([path, result.response.status]).toEqual([path, 403]);
      }
      expect(lookup).not.toHaveBeenCalled();
      expect((await server.store.getApiKey(org.id, apiKey.id))?.name).toBe('verified key');
    });
  });

  describe('413 request_too_large [2026-10-21]', () => refusesLargeBodies(operation, () => verifierKey));
  describe('415 invalid_request_error (unsupported media type) [2026-10-21]', () =>
    refusesOtherMediaTypes(operation, () => verifierKey));

  describe('429 rate_limit_error [2026-10-21]', () => refusesFailingAddresses(operation));

  describe('500 api_error [2026-10-21]', () => answersInternalErrors(operation, () => verifierKey));

  describe('503 service_unavailable_error [2026-10-21]', () => answersUnavailable(operation, () => verifierKey));
});
