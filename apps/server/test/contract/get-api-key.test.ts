import {
  API_VERSION,
  apiKeyPath,
  authHeaders,
  createKey,
  DEFAULT_ORGANIZATION,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  startTestServer,
  type TestServer,
  VERSION_HEADER,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const KEY_PATH = '/v1/organizations/api_keys/{api_key_id}';

describe('getApiKey', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A raw GET of one key, so invalid IDs and headers can be sent. */
  async function getRaw(id: string, headers: Record<string, string> = authHeaders(server.adminKey), query = '') {
    const result = await server.request(`${apiKeyPath(id)}${query}`, { headers });
    expectMatchesSpec('getApiKey', result.response, result.body);
    return result;
  }

  describe('200 the API key', () => {
    it('returns the key as stored, with every documented field', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id, {
        name: 'Production backend',
        workspaceId: 'wrkspc_prod',
        createdBy: { id: 'user_alice', type: 'user' },
        status: 'inactive',
      });

      const { data, error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expect(error).toBeUndefined();
      expectMatchesSpec('getApiKey', response, data);
      expect(response.status).toBe(200);
      expect(data).toEqual(apiKey);
      expect(data).toEqual({
        id: apiKey.id,
        type: 'api_key',
        name: 'Production backend',
        workspace_id: 'wrkspc_prod',
        created_at: apiKey.created_at,
        created_by: { id: 'user_alice', type: 'user' },
        partial_key_hint: apiKey.partial_key_hint,
        status: 'inactive',
      });
    });

    it('returns a key of the default workspace with workspace_id null', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id, { workspaceId: null });

      const { data, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, data);
      expect(data?.workspace_id).toBeNull();
    });

    it('never returns the secret, only a redacted hint of it', async () => {
      const { apiKey, secret } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, text } = await getRaw(apiKey.id);

      expect(response.status).toBe(200);
      expect(text).not.toContain(secret);
      expect(apiKey.partial_key_hint).toMatch(/^sk-api-[A-Za-z0-9]{4}\.\.\.[A-Za-z0-9]{4}$/);
      expect(apiKey.partial_key_hint).toBe(`${secret.slice(0, 11)}...${secret.slice(-4)}`);
    });

    it('accepts anthropic-version as an alias of vendor-version', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body } = await getRaw(apiKey.id, {
        'x-api-key': server.adminKey,
        'anthropic-version': API_VERSION,
      });

      expect(response.status).toBe(200);
      expect(body).toEqual(apiKey);
    });
  });

  describe('400 invalid_request_error', () => {
    it('rejects a request without a version header', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body } = await getRaw(apiKey.id, { 'x-api-key': server.adminKey });

      expectError(
        { response, body },
        {
          operationId: 'getApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: 'vendor-version: header is required',
        },
      );
    });

    it('rejects an unsupported version', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body } = await getRaw(
        apiKey.id,
        authHeaders(server.adminKey, { 'vendor-version': '2024-01-01' }),
      );

      expectError(
        { response, body },
        {
          operationId: 'getApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: /^vendor-version: .*"2024-01-01"/,
        },
      );
    });

    it('rejects a query parameter the operation does not declare', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body } = await getRaw(apiKey.id, authHeaders(server.adminKey), '?expand=secret');

      expectError(
        { response, body },
        {
          operationId: 'getApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: /^expand: unknown query parameter/,
        },
      );
    });

    it('rejects an api_key_id longer than 255 characters, naming the parameter', async () => {
      const { response, body } = await getRaw('k'.repeat(256));

      expectError(
        { response, body },
        {
          operationId: 'getApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: /^api_key_id: must NOT have more than 255 characters/,
        },
      );
    });

    it('rejects a path with malformed percent-encoding', async () => {
      const result = await server.request('/v1/organizations/api_keys/%E0%A4%A', {
        headers: authHeaders(server.adminKey),
      });
      expectMatchesSpec('getApiKey', result.response, result.body);

      expectError(result, { operationId: 'getApiKey', status: 400, type: 'invalid_request_error', message: /^path: / });
    });
  });

  describe('401 authentication_error', () => {
    it('rejects a request without x-api-key', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { response, body } = await getRaw(apiKey.id, { 'vendor-version': API_VERSION });

      expectError(
        { response, body },
        {
          operationId: 'getApiKey',
          status: 401,
          type: 'authentication_error',
          message: 'x-api-key header is required',
        },
      );
    });

    it('rejects an unknown admin key without revealing whether the key exists', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { error, response } = await server
        .clientFor('sk-adm-doesnotexistdoesnotexistdoesnotexistdoe')
        .GET(KEY_PATH, { params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } } });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        { operationId: 'getApiKey', status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
      );
    });

    it('rejects a disabled admin key', async () => {
      const org = await server.createOrganization();
      const { apiKey } = await createKey(server.store, org.id);
      await server.store.setAdminKeyStatus(org.adminKeyId, 'disabled');

      const { error, response } = await org.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        { operationId: 'getApiKey', status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
      );
    });
  });

  describe('403 permission_error', () => {
    it('refuses a regular API key, even when it asks for itself', async () => {
      const { apiKey, secret } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { error, response } = await server.clientFor(secret).GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        { operationId: 'getApiKey', status: 403, type: 'permission_error', message: /admin key/ },
      );
    });
  });

  describe('404 not_found_error', () => {
    it('answers 404 naming the ID when no key has it', async () => {
      const { error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: 'apikey_000000000000000000000000' } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        {
          operationId: 'getApiKey',
          status: 404,
          type: 'not_found_error',
          message: 'api_key_id: no API key with ID apikey_000000000000000000000000',
        },
      );
    });

    it('answers a key of another organization exactly as a key that does not exist', async () => {
      const other = await server.createOrganization();
      const { apiKey } = await createKey(server.store, other.id);

      const { error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        {
          operationId: 'getApiKey',
          status: 404,
          type: 'not_found_error',
          message: `api_key_id: no API key with ID ${apiKey.id}`,
        },
      );
    });
  });

  describe('429 rate_limit_error', () => {
    it('refuses a request over the admin key budget with retry-after, and answers the next one in time', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const { apiKey } = await createKey(limited.store, DEFAULT_ORGANIZATION.id);
        const get = () =>
          limited.client.GET(KEY_PATH, { params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } } });
        expect((await get()).response.status).toBe(200);

        const { error, response } = await get();

        expectError(
          { response, body: error },
          {
            operationId: 'getApiKey',
            status: 429,
            type: 'rate_limit_error',
            message: /^too many requests for this admin key/,
          },
        );
        // One request at once, at 60 a minute: the burst window is one second.
        expect(response.headers.get('retry-after')).toBe('1');
      } finally {
        await limited.close();
      }
    });
  });

  describe('503 service_unavailable_error', () => {
    it('answers 503 with retry-after when the database does not answer in time, and logs why', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);
      const unavailable = new DatabaseUnavailableError('timeout', 'the database is unavailable (timeout): no answer');
      vi.spyOn(server.store, 'getApiKey').mockRejectedValueOnce(unavailable);

      const { error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectUnavailable(server.logLines, { response, body: error }, 'getApiKey');
    });
  });

  describe('500 api_error', () => {
    it('answers a generic error when the store fails, and logs the details', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);
      vi.spyOn(server.store, 'getApiKey').mockRejectedValueOnce(new Error('boom: disk I/O error at /var/db'));

      const { error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectInternalError(server.logLines, { response, body: error }, 'boom: disk I/O error at /var/db');
    });

    it('answers a generic error when the store returns a key the spec does not allow', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);
      const stored = await server.store.getApiKey(DEFAULT_ORGANIZATION.id, apiKey.id);
      vi.spyOn(server.store, 'getApiKey').mockResolvedValueOnce(stored && { ...stored, name: '' });

      const { error, response } = await server.client.GET(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
      });

      expectMatchesSpec('getApiKey', response, error);
      expectError(
        { response, body: error },
        { operationId: 'getApiKey', status: 500, type: 'api_error', message: 'internal server error' },
      );
    });
  });
});
