import { API_VERSION, API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import { microsToRfc3339, toApiKeyJson } from '@apikeys/server/serializers';
import {
  apiKeyPath,
  authHeaders,
  createTestKey,
  DEFAULT_ORGANIZATION,
  expectError,
  expectMatchesSpec,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { nowMicros } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesOverBudget,
  refusesRegularKeys,
  refusesUnauthenticated,
  refusesVerifierKeys,
} from './refusals.js';

const LATEST = LATEST_API_VERSION;

describe('getApiKey', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A raw GET of one key in `version`, so invalid IDs and headers can be sent; checked against its document. */
  async function getRaw(
    version: ApiVersion,
    id: string,
    headers: Record<string, string> = authHeaders(server.adminKey, { 'vendor-version': version }),
    query = '',
  ) {
    const result = await server.request(`${apiKeyPath(id)}${query}`, { headers });
    expectMatchesSpec('getApiKey', result.response, result.body, version);
    return result;
  }

  const invalid = (version: ApiVersion, message: RegExp | string) =>
    ({ operationId: 'getApiKey', status: 400, type: 'invalid_request_error', message, version }) as const;

  describe.each(API_VERSIONS)('200 the API key [%s]', (version) => {
    it('never returns the secret, only a redacted hint of it', async () => {
      const { apiKey, secret } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body, text } = await getRaw(version, apiKey.id);

      expect(response.status).toBe(200);
      expect(text).not.toContain(secret);
      expect(body).toMatchObject({ id: apiKey.id, partial_key_hint: `${secret.slice(0, 11)}...${secret.slice(-4)}` });
      expect(apiKey.partialKeyHint).toMatch(/^sk-api-[A-Za-z0-9]{4}\.\.\.[A-Za-z0-9]{4}$/);
    });

    it('accepts anthropic-version as an alias of vendor-version', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);
      const usual = await getRaw(version, apiKey.id);

      const { response, body } = await getRaw(version, apiKey.id, {
        'x-api-key': server.adminKey,
        'anthropic-version': version,
      });

      expect(response.status).toBe(200);
      expect(body).toEqual(usual.body);
    });
  });

  describe('200 the API key [2023-06-01]', () => {
    it('returns the key as stored, with every documented field', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, {
        name: 'Production backend',
        workspaceId: 'wrkspc_prod',
        createdBy: { id: 'user_alice', type: 'user' },
        status: 'inactive',
      });

      const { data, error, response } = await server.client.GET('/v1/organizations/api_keys/{api_key_id}', {
        params: { header: { 'vendor-version': API_VERSION }, path: { api_key_id: apiKey.id } },
      });

      expect(error).toBeUndefined();
      expectMatchesSpec('getApiKey', response, data);
      expect(response.status).toBe(200);
      expect(data).toEqual(toApiKeyJson(apiKey, nowMicros()));
      expect(data).toEqual({
        id: apiKey.id,
        type: 'api_key',
        name: 'Production backend',
        workspace_id: 'wrkspc_prod',
        created_at: microsToRfc3339(apiKey.createdAt),
        created_by: { id: 'user_alice', type: 'user' },
        partial_key_hint: apiKey.partialKeyHint,
        status: 'inactive',
      });
    });

    it('returns a key of the default workspace with workspace_id null', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, { workspaceId: null });

      const { body } = await getRaw(API_VERSION, apiKey.id);

      expect(body).toMatchObject({ workspace_id: null });
    });
  });

  describe('200 the API key [2026-10-21]', () => {
    it('returns the key in the shape of 2026-10-21: scope, principal, expiry and last use, no workspace_id', async () => {
      const expiry = '2099-03-04T05:06:07.123456Z';
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, {
        name: 'Production backend',
        workspaceId: 'wrkspc_prod',
        createdBy: { id: 'user_alice', type: 'user' },
        status: 'inactive',
        expiresAt: Date.parse(expiry) * 1000 + 456,
        principal: { type: 'service_account', id: 'svcacct_robot' },
        permissions: ['documents.read', 'admin.*'],
        metadata: { owner: 'team-a', tier: { name: 'gold', seats: 5 } },
      });

      const { response, body } = await getRaw(LATEST, apiKey.id);

      expect(response.status).toBe(200);
      expect(body).toEqual({
        id: apiKey.id,
        type: 'api_key',
        name: 'Production backend',
        created_at: microsToRfc3339(apiKey.createdAt),
        created_by: { id: 'user_alice', type: 'user' },
        expires_at: expiry,
        last_used_at: null,
        partial_key_hint: apiKey.partialKeyHint,
        principal: { type: 'service_account_actor', service_account_id: 'svcacct_robot' },
        scope: { type: 'workspace', workspace_id: 'wrkspc_prod' },
        status: 'inactive',
        permissions: ['documents.read', 'admin.*'],
        metadata: { owner: 'team-a', tier: { name: 'gold', seats: 5 } },
      });
    });

    it("shows the default workspace's real ID in scope, and organization scope for a key without a workspace", async () => {
      const defaultWorkspaceId = (await server.store.getOrganization(DEFAULT_ORGANIZATION.id))?.defaultWorkspaceId;
      const inDefault = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, { workspaceId: null });
      const organizationWide = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, {
        scope: 'organization',
        principal: { type: 'user', id: 'user_bob' },
      });

      expect((await getRaw(LATEST, inDefault.apiKey.id)).body).toMatchObject({
        scope: { type: 'workspace', workspace_id: defaultWorkspaceId },
        principal: null,
      });
      expect((await getRaw(LATEST, organizationWide.apiKey.id)).body).toMatchObject({
        scope: { type: 'organization' },
        principal: { type: 'user_actor', user_id: 'user_bob' },
      });
      expect(defaultWorkspaceId).toMatch(/^wrkspc_/);
    });

    it('shows a key past its expiry as expired with its expiry, and an archived one as archived', async () => {
      const past = nowMicros() - 60_000_000;
      const expired = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, {
        status: 'inactive',
        expiresAt: past,
      });
      const archived = await createTestKey(server.store, DEFAULT_ORGANIZATION.id, {
        status: 'archived',
        expiresAt: past,
      });

      const { body } = await getRaw(LATEST, expired.apiKey.id);

      expect(body).toMatchObject({ status: 'expired', expires_at: expect.stringMatching(/^\d{4}-.*\.\d{6}Z$/) });
      expect(Date.parse((body as { expires_at: string }).expires_at)).toBe(Math.floor(past / 1000));
      expect((await getRaw(LATEST, archived.apiKey.id)).body).toMatchObject({ status: 'archived' });
    });
  });

  describe.each(API_VERSIONS)('400 invalid_request_error [%s]', (version) => {
    it('rejects a query parameter the operation does not declare', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const result = await getRaw(version, apiKey.id, undefined, '?expand=secret');

      expectError(result, invalid(version, /^expand: unknown query parameter/));
    });

    // An empty list filter means no filter only on the list: here it is an unknown parameter, refused before the
    // key is looked up.
    it.each([
      ['a key of the organization', async () => (await createTestKey(server.store, DEFAULT_ORGANIZATION.id)).apiKey.id],
      ['an ID that names nothing', async () => 'apikey_000000000000000000000000'],
    ])('rejects an empty list filter (status=, workspace_id=), for %s', async (_, id) => {
      for (const filter of ['status', 'workspace_id']) {
        const result = await getRaw(version, await id(), undefined, `?${filter}=`);

        expectError(result, invalid(version, `${filter}: unknown query parameter`));
      }
    });

    it('rejects an api_key_id longer than 255 characters, naming the parameter', async () => {
      const result = await getRaw(version, 'k'.repeat(256));

      expectError(result, invalid(version, /^api_key_id: must NOT have more than 255 characters/));
    });

    it('rejects a path with malformed percent-encoding', async () => {
      const result = await server.request('/v1/organizations/api_keys/%E0%A4%A', {
        headers: authHeaders(server.adminKey, { 'vendor-version': version }),
      });

      expectError(result, invalid(version, /^path: /));
    });
  });

  describe('400 invalid_request_error [2023-06-01]', () => {
    it('rejects a request without a version header', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const result = await getRaw(API_VERSION, apiKey.id, { 'x-api-key': server.adminKey });

      expectError(result, invalid(API_VERSION, 'vendor-version: header is required'));
    });

    it('rejects an unsupported version', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const result = await getRaw(
        API_VERSION,
        apiKey.id,
        authHeaders(server.adminKey, { 'vendor-version': '2024-01-01' }),
      );

      expectError(result, invalid(API_VERSION, /^vendor-version: .*"2024-01-01"/));
    });
  });

  const operation = (version: ApiVersion): RefusedOperation => ({
    operationId: 'getApiKey',
    version,
    context: () => ({ server, organizationId: DEFAULT_ORGANIZATION.id }),
    path: async (on, organizationId) => apiKeyPath((await createTestKey(on.store, organizationId)).apiKey.id),
    storeMethod: 'getApiKey',
  });
  const adminKey = () => server.adminKey;

  describe.each(API_VERSIONS)('401 authentication_error [%s]', (version) => refusesUnauthenticated(operation(version)));

  describe.each(API_VERSIONS)('403 permission_error [%s]', (version) => {
    refusesRegularKeys(operation(version));
    refusesVerifierKeys(operation(version));

    it('refuses a regular API key even when it asks for itself', async () => {
      const { apiKey, secret } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const result = await getRaw(version, apiKey.id, authHeaders(secret, { 'vendor-version': version }));

      expectError(result, {
        operationId: 'getApiKey',
        status: 403,
        type: 'permission_error',
        message: /admin key/,
        version,
      });
    });
  });

  describe.each(API_VERSIONS)('404 not_found_error [%s]', (version) => {
    const notFound = (id: string) =>
      ({
        operationId: 'getApiKey',
        status: 404,
        type: 'not_found_error',
        message: `api_key_id: no API key with ID ${id}`,
        version,
      }) as const;

    it('answers 404 naming the ID when no key has it', async () => {
      const id = 'apikey_000000000000000000000000';

      expectError(await getRaw(version, id), notFound(id));
    });

    it('answers a key of another organization exactly as a key that does not exist', async () => {
      const other = await server.createOrganization();
      const { apiKey } = await createTestKey(server.store, other.id);

      expectError(await getRaw(version, apiKey.id), notFound(apiKey.id));
    });
  });

  describe.each(API_VERSIONS)('429 rate_limit_error [%s]', (version) => {
    refusesOverBudget(operation(version));

    it('answers the next request once the burst window of one second has passed', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const { apiKey } = await createTestKey(limited.store, DEFAULT_ORGANIZATION.id);
        const get = () =>
          limited.request(apiKeyPath(apiKey.id), {
            headers: authHeaders(limited.adminKey, { 'vendor-version': version }),
          });
        expect((await get()).response.status).toBe(200);

        const result = await get();

        expectError(result, {
          operationId: 'getApiKey',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this admin key/,
          version,
        });
        // One request at once, at 60 a minute: the burst window is one second.
        expect(result.response.headers.get('retry-after')).toBe('1');
      } finally {
        await limited.close();
      }
    });
  });

  describe.each(API_VERSIONS)('503 service_unavailable_error [%s]', (version) =>
    answersUnavailable(operation(version), adminKey),
  );

  describe.each(API_VERSIONS)('500 api_error [%s]', (version) => {
    answersInternalErrors(operation(version), adminKey);

    it('answers a generic error when the store returns a key the spec does not allow', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);
      const stored = await server.store.getApiKey(DEFAULT_ORGANIZATION.id, apiKey.id);
      vi.spyOn(server.store, 'getApiKey').mockResolvedValueOnce(stored && { ...stored, name: '' });

      const result = await getRaw(version, apiKey.id);

      expectError(result, {
        operationId: 'getApiKey',
        status: 500,
        type: 'api_error',
        message: 'internal server error',
        version,
      });
    });
  });
});
