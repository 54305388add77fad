import type { ApiKey } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  API_VERSION,
  authHeaders,
  createKey,
  DEFAULT_ORGANIZATION,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  snapshotKeys,
  startTestServer,
  type TestServer,
  VERSION_HEADER,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const ids = (keys: readonly ApiKey[]) => keys.map((key) => key.id);

describe('listApiKeys', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** An admin key this server has not authenticated yet: its process remembers the keys it has seen. */
  async function adminKeyNotYetCached(): Promise<string> {
    const { secret } = await server.store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'unseen' });
    return secret;
  }

  /** A raw GET of the list with the given query string, so invalid values can be sent. */
  async function listRaw(query: string, headers: Record<string, string> = authHeaders(server.adminKey)) {
    const result = await server.request(`${API_KEYS_PATH}${query === '' ? '' : `?${query}`}`, { headers });
    expectMatchesSpec('listApiKeys', result.response, result.body);
    return result;
  }

  describe('200 one page of API keys', () => {
    it('returns an empty page with null first_id and last_id when the organization has no keys', async () => {
      const org = await server.createOrganization();

      const { data, error, response } = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expect(error).toBeUndefined();
      expectMatchesSpec('listApiKeys', response, data);
      expect(response.status).toBe(200);
      expect(data).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    });

    it('returns the 20 newest keys by default, with has_more and the ids of the first and last key', async () => {
      const org = await server.createOrganization();
      for (let i = 0; i < 25; i++) {
        await createKey(server.store, org.id, { name: `key ${i}` });
      }
      const all = await snapshotKeys(server.store, org.id);

      const { data, response } = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectMatchesSpec('listApiKeys', response, data);
      expect(data?.data).toHaveLength(20);
      expect(ids(data?.data ?? [])).toEqual(ids(all).slice(0, 20));
      expect(data?.has_more).toBe(true);
      expect(data?.first_id).toBe(data?.data[0]?.id);
      expect(data?.last_id).toBe(data?.data[19]?.id);
    });

    it('returns exactly `limit` keys, and has_more false when no key is left', async () => {
      const org = await server.createOrganization();
      for (let i = 0; i < 3; i++) {
        await createKey(server.store, org.id);
      }

      const two = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER, query: { limit: 2 } } });
      const three = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER, query: { limit: 3 } } });

      expectMatchesSpec('listApiKeys', two.response, two.data);
      expectMatchesSpec('listApiKeys', three.response, three.data);
      expect(two.data?.data).toHaveLength(2);
      expect(two.data?.has_more).toBe(true);
      expect(three.data?.data).toHaveLength(3);
      expect(three.data?.has_more).toBe(false);
    });

    it('lists keys created one after another newest first (reverse order of creation)', async () => {
      const org = await server.createOrganization();
      const created: string[] = [];
      for (let i = 0; i < 60; i++) {
        created.push((await createKey(server.store, org.id, { name: `key ${i}` })).apiKey.id);
      }

      const { data, response } = await org.client.GET(API_KEYS_PATH, {
        params: { header: VERSION_HEADER, query: { limit: 100 } },
      });

      expectMatchesSpec('listApiKeys', response, data);
      const createdAt = (data?.data ?? []).map((key) => key.created_at);
      expect(createdAt).toEqual([...createdAt].sort().reverse());
      expect(ids(data?.data ?? [])).toEqual([...created].reverse());
    });

    it('returns each key with the documented fields and never its secret', async () => {
      const org = await server.createOrganization();
      const { apiKey, secret } = await createKey(server.store, org.id, {
        name: 'Billing',
        workspaceId: 'wrkspc_billing',
        createdBy: { id: 'svc_robot', type: 'service_account' },
        status: 'inactive',
      });

      const { response, body, text } = await listRaw('', authHeaders(org.adminKey));

      expect(response.status).toBe(200);
      expect(body).toEqual({ data: [apiKey], has_more: false, first_id: apiKey.id, last_id: apiKey.id });
      expect(apiKey).toMatchObject({
        type: 'api_key',
        name: 'Billing',
        workspace_id: 'wrkspc_billing',
        created_by: { id: 'svc_robot', type: 'service_account' },
        status: 'inactive',
      });
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(-12));
    });

    it('combines the status, workspace_id and created_by_user_id filters with AND', async () => {
      const org = await server.createOrganization();
      const match = await createKey(server.store, org.id, {
        status: 'archived',
        workspaceId: 'wrkspc_a',
        createdBy: { id: 'user_a', type: 'user' },
      });
      await createKey(server.store, org.id, {
        status: 'active',
        workspaceId: 'wrkspc_a',
        createdBy: { id: 'user_a', type: 'user' },
      });
      await createKey(server.store, org.id, {
        status: 'archived',
        workspaceId: 'wrkspc_b',
        createdBy: { id: 'user_a', type: 'user' },
      });
      await createKey(server.store, org.id, {
        status: 'archived',
        workspaceId: 'wrkspc_a',
        createdBy: { id: 'user_b', type: 'user' },
      });
      await createKey(server.store, org.id, {
        status: 'archived',
        workspaceId: 'wrkspc_a',
        createdBy: { id: 'user_a', type: 'service_account' },
      });

      const { data, response } = await org.client.GET(API_KEYS_PATH, {
        params: {
          header: VERSION_HEADER,
          query: { status: 'archived', workspace_id: 'wrkspc_a', created_by_user_id: 'user_a' },
        },
      });
      const byStatus = await org.client.GET(API_KEYS_PATH, {
        params: { header: VERSION_HEADER, query: { status: 'archived' } },
      });

      expectMatchesSpec('listApiKeys', response, data);
      expectMatchesSpec('listApiKeys', byStatus.response, byStatus.data);
      expect(ids(data?.data ?? [])).toEqual([match.apiKey.id]);
      expect(data?.has_more).toBe(false);
      expect(byStatus.data?.data).toHaveLength(4);
    });

    it('lists only the keys of the organization that owns the admin key', async () => {
      const mine = await server.createOrganization();
      const theirs = await server.createOrganization();
      const own = await createKey(server.store, mine.id);
      await createKey(server.store, theirs.id);

      const { data, response } = await mine.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectMatchesSpec('listApiKeys', response, data);
      expect(ids(data?.data ?? [])).toEqual([own.apiKey.id]);
    });

    it('accepts anthropic-version as an alias of vendor-version', async () => {
      const { response } = await listRaw('limit=1', { 'x-api-key': server.adminKey, 'anthropic-version': API_VERSION });

      expect(response.status).toBe(200);
    });
  });

  describe('400 invalid_request_error', () => {
    it.each([
      ['limit=0', /^limit: /],
      ['limit=1001', /^limit: /],
      ['limit=abc', /^limit: /],
      ['limit=1.5', /^limit: /],
      ['limit=', /^limit: /],
      ['limit=1&limit=2', /^limit: /],
      ['status=deleted', /^status: must be one of "active", "inactive", "archived"/],
      ['workspace_id=', /^workspace_id: /],
      ['created_by_user_id=', /^created_by_user_id: /],
      ['after_id=', /^after_id: /],
      ['before_id=', /^before_id: /],
      [`after_id=${'a'.repeat(256)}`, /^after_id: /],
      ['page=2', /^page: unknown query parameter/],
      ['after_id=apikey_000000000000000000000000', /^after_id: no API key with ID apikey_000000000000000000000000$/],
      ['before_id=apikey_000000000000000000000000', /^before_id: no API key with ID apikey_000000000000000000000000$/],
    ])('rejects ?%s with a message that names the parameter', async (query, message) => {
      const { response, body } = await listRaw(query);

      expectError(
        { response, body },
        { operationId: 'listApiKeys', status: 400, type: 'invalid_request_error', message },
      );
    });

    it('rejects before_id together with after_id', async () => {
      const { apiKey } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { data, error, response } = await server.client.GET(API_KEYS_PATH, {
        params: { header: VERSION_HEADER, query: { before_id: apiKey.id, after_id: apiKey.id } },
      });

      expect(data).toBeUndefined();
      expectMatchesSpec('listApiKeys', response, error);
      expectError(
        { response, body: error },
        { operationId: 'listApiKeys', status: 400, type: 'invalid_request_error', message: /^before_id: .*after_id/ },
      );
    });

    it('rejects a cursor that names a key of another organization, as if it did not exist', async () => {
      const other = await server.createOrganization();
      const { apiKey } = await createKey(server.store, other.id);

      const { error, response } = await server.client.GET(API_KEYS_PATH, {
        params: { header: VERSION_HEADER, query: { after_id: apiKey.id } },
      });

      expectMatchesSpec('listApiKeys', response, error);
      expectError(
        { response, body: error },
        {
          operationId: 'listApiKeys',
          status: 400,
          type: 'invalid_request_error',
          message: `after_id: no API key with ID ${apiKey.id}`,
        },
      );
    });

    it('rejects a request without a version header', async () => {
      const { response, body } = await listRaw('', { 'x-api-key': server.adminKey });

      expectError(
        { response, body },
        {
          operationId: 'listApiKeys',
          status: 400,
          type: 'invalid_request_error',
          message: 'vendor-version: header is required',
        },
      );
    });

    it('rejects an unsupported version, naming the value sent and the supported versions', async () => {
      const { response, body } = await listRaw('', authHeaders(server.adminKey, { 'vendor-version': '2020-01-01' }));

      expectError(
        { response, body },
        {
          operationId: 'listApiKeys',
          status: 400,
          type: 'invalid_request_error',
          message: /^vendor-version: .*"2020-01-01".*2023-06-01/,
        },
      );
    });
  });

  describe('401 authentication_error', () => {
    it('rejects a request without x-api-key', async () => {
      const { response, body } = await listRaw('', { 'vendor-version': API_VERSION });

      expectError(
        { response, body },
        {
          operationId: 'listApiKeys',
          status: 401,
          type: 'authentication_error',
          message: 'x-api-key header is required',
        },
      );
    });

    it('rejects an unknown admin key', async () => {
      const { error, response } = await server
        .clientFor('sk-adm-unknownunknownunknownunknownunknownunkno')
        .GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectMatchesSpec('listApiKeys', response, error);
      expectError(
        { response, body: error },
        { operationId: 'listApiKeys', status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
      );
    });

    it('rejects a disabled admin key', async () => {
      const org = await server.createOrganization();
      await server.store.setAdminKeyStatus(org.adminKeyId, 'disabled');

      const { error, response } = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectMatchesSpec('listApiKeys', response, error);
      expectError(
        { response, body: error },
        { operationId: 'listApiKeys', status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
      );
    });
  });

  describe('403 permission_error', () => {
    it('refuses a regular API key used as x-api-key', async () => {
      const { secret } = await createKey(server.store, DEFAULT_ORGANIZATION.id);

      const { error, response } = await server.clientFor(secret).GET(API_KEYS_PATH, {
        params: { header: VERSION_HEADER },
      });

      expectMatchesSpec('listApiKeys', response, error);
      expectError(
        { response, body: error },
        { operationId: 'listApiKeys', status: 403, type: 'permission_error', message: /admin key/ },
      );
    });
  });

  describe('429 rate_limit_error', () => {
    let limited: TestServer;
    beforeAll(async () => {
      limited = await startTestServer({ rateLimits: { perMinute: 2, burst: 2, authFailuresPerMinute: 1 } });
    });
    afterAll(() => limited.close());

    it('refuses a request over the admin key budget with retry-after and the budget headers', async () => {
      const list = () => limited.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });
      const first = await list();
      await list();

      const { error, response } = await list();

      expect(first.response.headers.get('ratelimit-limit')).toBe('2');
      expect(first.response.headers.get('ratelimit-remaining')).toBe('1');
      expectError(
        { response, body: error },
        {
          operationId: 'listApiKeys',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this admin key; retry after \d+ seconds?$/,
        },
      );
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get('ratelimit-remaining')).toBe('0');
    });

    it('refuses failed authentications from one address past the limit with 429 instead of 401', async () => {
      const guess = () =>
        limited
          .clientFor('sk-adm-guessguessguessguessguessguessguessgue')
          .GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });
      expect((await guess()).response.status).toBe(401);

      const { error, response } = await guess();

      expectError(
        { response, body: error },
        {
          operationId: 'listApiKeys',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many failed authentications; retry after \d+ seconds?$/,
        },
      );
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });
  });

  describe('503 service_unavailable_error', () => {
    it('answers 503 with retry-after when the database is unavailable, and logs why', async () => {
      const unavailable = new DatabaseUnavailableError('timeout', 'the database is unavailable (timeout): no answer');
      vi.spyOn(server.store, 'listApiKeys').mockRejectedValueOnce(unavailable);

      const { error, response } = await server.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectUnavailable(server.logLines, { response, body: error }, 'listApiKeys');
    });

    it('answers 503 when authentication cannot reach the database', async () => {
      const unseen = await adminKeyNotYetCached();
      const unavailable = new DatabaseUnavailableError('unreachable', 'the database is unavailable: ECONNREFUSED');
      vi.spyOn(server.store, 'findCredential').mockRejectedValueOnce(unavailable);

      const { response, body } = await listRaw('', authHeaders(unseen));

      expectUnavailable(server.logLines, { response, body }, 'listApiKeys');
    });
  });

  describe('500 api_error', () => {
    it('answers a generic error when the store fails, and logs the details', async () => {
      vi.spyOn(server.store, 'listApiKeys').mockRejectedValueOnce(new Error('boom: list query failed'));

      const { error, response } = await server.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER } });

      expectMatchesSpec('listApiKeys', response, error);
      expectInternalError(server.logLines, { response, body: error }, 'boom: list query failed');
    });

    it('answers a generic error when authentication cannot reach the store', async () => {
      const unseen = await adminKeyNotYetCached();
      vi.spyOn(server.store, 'findCredential').mockRejectedValueOnce(new Error('boom: credential lookup failed'));

      const { response, body } = await listRaw('', authHeaders(unseen));

      expectInternalError(server.logLines, { response, body }, 'boom: credential lookup failed');
    });
  });
});
