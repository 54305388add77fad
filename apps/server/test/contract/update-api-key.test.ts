import { API_VERSIONS, type ApiKey } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  API_VERSION,
  createKey,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  jsonPostHeaders,
  postRaw,
  startTestServer,
  storedKey,
  type TestOrganizationWithClient,
  type TestServer,
  VERSION_HEADER,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { refusesOtherMediaTypes, type WriteOperation } from './write-refusals.js';

const KEY_PATH = '/v1/organizations/api_keys/{api_key_id}';
const EMOJI = '\u{1F511}';

describe('updateApiKey', () => {
  let server: TestServer;
  /** Each test works on keys of its own organization, so list assertions see only that test's keys. */
  let org: TestOrganizationWithClient;
  /** The organization of the refusals shared with the other write operations (write-refusals.ts). */
  let refusals: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    refusals = await server.createOrganization('update refusals');
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function newKey(): Promise<ApiKey> {
    org = await server.createOrganization();
    const { apiKey } = await createKey(server.store, org.id, {
      name: 'Original name',
      workspaceId: 'wrkspc_update',
      createdBy: { id: 'user_owner', type: 'user' },
      status: 'active',
    });
    return apiKey;
  }

  /** Reads a key through the API, checking the response against the spec. */
  async function getKey(id: string): Promise<ApiKey | undefined> {
    const { data, response } = await org.client.GET(KEY_PATH, {
      params: { header: VERSION_HEADER, path: { api_key_id: id } },
    });
    expectMatchesSpec('getApiKey', response, data);
    return data;
  }

  /** Lists the test organization's keys through the API, checking the response against the spec. */
  async function listKeys(query: { status?: ApiKey['status'] } = {}): Promise<ApiKey[]> {
    const { data, response } = await org.client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER, query } });
    expectMatchesSpec('listApiKeys', response, data);
    return data?.data ?? [];
  }

  /** Asserts that `reject` is refused and that the key reads the same through the API before and after it. */
  async function expectUnchangedBy(key: ApiKey, reject: () => Promise<void>): Promise<void> {
    const before = await getKey(key.id);
    expect(before).toEqual(key);

    await reject();

    expect(await getKey(key.id)).toEqual(before);
    expect(await storedKey(server.store, org.id, key.id)).toEqual(before);
  }

  /** A raw JSON POST with the test organization's admin key; `undefined` in `headers` leaves a header out. */
  async function post(id: string, body: string | Uint8Array, headers: Record<string, string | undefined> = {}) {
    const result = await postRaw(server, id, body, jsonPostHeaders(org.adminKey, headers));
    expectMatchesSpec('updateApiKey', result.response, result.body);
    return result;
  }

  describe('200 the API key as updated', () => {
    it('renames a key, returns it, and a following get and list show the new name', async () => {
      const key = await newKey();

      const { data, error, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { name: 'Billing service' },
      });

      expect(error).toBeUndefined();
      expectMatchesSpec('updateApiKey', response, data);
      expect(response.status).toBe(200);
      expect(data).toEqual({ ...key, name: 'Billing service' });
      expect(await getKey(key.id)).toEqual(data);
      expect(await listKeys()).toEqual([data]);
    });

    it('changes the status, and a list filtered by the new status shows the key', async () => {
      const key = await newKey();

      const { data, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { status: 'inactive' },
      });

      expectMatchesSpec('updateApiKey', response, data);
      expect(data).toEqual({ ...key, status: 'inactive' });
      expect(await getKey(key.id)).toEqual(data);
      expect(await listKeys({ status: 'inactive' })).toEqual([data]);
      expect(await listKeys({ status: 'active' })).toEqual([]);
    });

    it('renames and archives in one request', async () => {
      const key = await newKey();

      const { data, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { name: 'Old billing service', status: 'archived' },
      });

      expectMatchesSpec('updateApiKey', response, data);
      expect(data).toEqual({ ...key, name: 'Old billing service', status: 'archived' });
      expect(await listKeys({ status: 'archived' })).toEqual([data]);
    });

    it('changes nothing and returns the key when the body is {}', async () => {
      const key = await newKey();

      const { data, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: {},
      });

      expectMatchesSpec('updateApiKey', response, data);
      expect(data).toEqual(key);
      expect(await getKey(key.id)).toEqual(key);
    });

    it('leaves the status unchanged when it is null', async () => {
      const key = await newKey();

      const alone = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { status: null },
      });
      const withName = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { name: 'Renamed', status: null },
      });

      expectMatchesSpec('updateApiKey', alone.response, alone.data);
      expectMatchesSpec('updateApiKey', withName.response, withName.data);
      expect(alone.data).toEqual(key);
      expect(withName.data).toEqual({ ...key, name: 'Renamed' });
      expect(await getKey(key.id)).toEqual({ ...key, name: 'Renamed' });
    });

    it('can switch an inactive key back on', async () => {
      const key = await newKey();
      await server.store.updateApiKey(org.id, key.id, { status: 'inactive' });

      const { data, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { status: 'active' },
      });

      expectMatchesSpec('updateApiKey', response, data);
      expect(data?.status).toBe('active');
    });

    it.each([
      ['1 character', 'x'],
      ['500 ASCII characters', 'n'.repeat(500)],
      ['500 emoji: 500 code points, 1000 UTF-16 units', EMOJI.repeat(500)],
      ['combining marks and right-to-left text', 'Cafe\u0301 \u05E9\u05DC\u05D5\u05DD'],
    ])('accepts a name of %s and returns it intact', async (_label, name) => {
      const key = await newKey();

      const { data, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
        body: { name },
      });

      expectMatchesSpec('updateApiKey', response, data);
      expect(response.status).toBe(200);
      expect(data?.name).toBe(name);
      expect((await getKey(key.id))?.name).toBe(name);
      expect((await listKeys())[0]?.name).toBe(name);
    });

    it('accepts application/json with an explicit utf-8 charset and anthropic-version', async () => {
      const key = await newKey();

      const { response, body } = await post(key.id, JSON.stringify({ name: 'Charset' }), {
        'content-type': 'application/json; charset=utf-8',
        'vendor-version': undefined,
        'anthropic-version': API_VERSION,
      });

      expect(response.status).toBe(200);
      expect(body).toEqual({ ...key, name: 'Charset' });
    });
  });

  describe('400 invalid_request_error', () => {
    it.each([
      ['an empty name', { name: '' }, /^name: must NOT have fewer than 1 characters/],
      ['a name of 501 emoji', { name: EMOJI.repeat(501) }, /^name: must NOT have more than 500 characters/],
      ['a name of 501 ASCII characters', { name: 'n'.repeat(501) }, /^name: must NOT have more than 500 characters/],
      ['a null name (name is not nullable)', { name: null }, /^name: must be string/],
      ['a numeric name', { name: 42 }, /^name: must be string/],
      ['an unknown status', { status: 'deleted' }, /^status: must be one of "active", "inactive", "archived", null/],
      ['a status in the wrong case', { status: 'ACTIVE' }, /^status: /],
      ['an unknown field', { secret: 'sk-api-x' }, /^secret: unknown field/],
      ['an unknown field next to a valid one', { name: 'Fine', expires_at: null }, /^expires_at: unknown field/],
      ['a valid name with an invalid status', { name: 'Half applied', status: 'bogus' }, /^status: /],
      ['an array', [], /^body: /],
      ['a string', 'rename me', /^body: /],
      ['a number', 7, /^body: /],
    ])('rejects %s and changes nothing', async (_label, body, message) => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body: error } = await post(key.id, JSON.stringify(body));
        expectError(
          { response, body: error },
          { operationId: 'updateApiKey', status: 400, type: 'invalid_request_error', message },
        );
      });
    });

    it.each([
      ['malformed JSON', '{"name": "unterminated'],
      ['a JSON null', 'null'],
      ['an empty body (the request body is required)', ''],
    ])('rejects %s and changes nothing', async (_label, text) => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body } = await post(key.id, text);
        expectError(
          { response, body },
          { operationId: 'updateApiKey', status: 400, type: 'invalid_request_error', message: /^body: / },
        );
      });
    });

    it('rejects a request without a version header and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body } = await post(key.id, JSON.stringify({ name: 'No version' }), {
          'vendor-version': undefined,
        });
        expectError(
          { response, body },
          {
            operationId: 'updateApiKey',
            status: 400,
            type: 'invalid_request_error',
            message: 'vendor-version: header is required',
          },
        );
      });
    });

    it('rejects an unsupported version and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body } = await post(key.id, JSON.stringify({ name: 'Old version' }), {
          'vendor-version': '2022-01-01',
        });
        expectError(
          { response, body },
          {
            operationId: 'updateApiKey',
            status: 400,
            type: 'invalid_request_error',
            message: /^vendor-version: .*"2022-01-01"/,
          },
        );
      });
    });

    it('rejects a query parameter the operation does not declare and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const result = await server.request(`${API_KEYS_PATH}/${key.id}?dry_run=true`, {
          method: 'POST',
          headers: { 'x-api-key': org.adminKey, 'vendor-version': API_VERSION, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Query' }),
        });
        expectMatchesSpec('updateApiKey', result.response, result.body);
        expectError(result, {
          operationId: 'updateApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: /^dry_run: unknown query parameter/,
        });
      });
    });
  });

  describe('401 authentication_error', () => {
    it.each([
      ['no x-api-key', ''],
      ['an unknown admin key', 'sk-adm-notarealkeynotarealkeynotarealkeynotar'],
    ])('rejects %s and changes nothing', async (_label, adminKey) => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const result = await postRaw(
          server,
          key.id,
          JSON.stringify({ status: 'archived' }),
          jsonPostHeaders(adminKey, { 'x-api-key': adminKey === '' ? undefined : adminKey }),
        );
        expectMatchesSpec('updateApiKey', result.response, result.body);
        expectError(result, {
          operationId: 'updateApiKey',
          status: 401,
          type: 'authentication_error',
          message: adminKey === '' ? 'x-api-key header is required' : 'invalid x-api-key',
        });
      });
    });

    it('rejects a disabled admin key and changes nothing', async () => {
      const key = await newKey();
      const disabled = await server.store.createAdminKey({ organizationId: org.id, name: 'disabled' });
      await server.store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');

      await expectUnchangedBy(key, async () => {
        const { error, response } = await server.clientFor(disabled.secret).POST(KEY_PATH, {
          params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
          body: { status: 'archived' },
        });
        expectMatchesSpec('updateApiKey', response, error);
        expectError(
          { response, body: error },
          { operationId: 'updateApiKey', status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
        );
      });
    });
  });

  describe('403 permission_error', () => {
    it('refuses a regular API key trying to rename itself and changes nothing', async () => {
      org = await server.createOrganization();
      const { apiKey, secret } = await createKey(server.store, org.id, { name: 'Original name' });

      await expectUnchangedBy(apiKey, async () => {
        const { error, response } = await server.clientFor(secret).POST(KEY_PATH, {
          params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
          body: { name: 'Self-renamed' },
        });
        expectMatchesSpec('updateApiKey', response, error);
        expectError(
          { response, body: error },
          { operationId: 'updateApiKey', status: 403, type: 'permission_error', message: /admin key/ },
        );
      });
    });
  });

  describe('404 not_found_error', () => {
    it('answers 404 naming the ID when no key has it', async () => {
      org = await server.createOrganization();

      const { error, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: 'apikey_000000000000000000000000' } },
        body: { name: 'Ghost' },
      });

      expectMatchesSpec('updateApiKey', response, error);
      expectError(
        { response, body: error },
        {
          operationId: 'updateApiKey',
          status: 404,
          type: 'not_found_error',
          message: 'api_key_id: no API key with ID apikey_000000000000000000000000',
        },
      );
    });

    it('answers 404 for an empty update of a key that does not exist', async () => {
      org = await server.createOrganization();

      const { error, response } = await org.client.POST(KEY_PATH, {
        params: { header: VERSION_HEADER, path: { api_key_id: 'apikey_000000000000000000000000' } },
        body: {},
      });

      expectMatchesSpec('updateApiKey', response, error);
      expect(response.status).toBe(404);
    });

    it('answers a key of another organization as one that does not exist, and leaves it unchanged', async () => {
      const key = await newKey();
      const intruder = await server.createOrganization();

      await expectUnchangedBy(key, async () => {
        const { error, response } = await intruder.client.POST(KEY_PATH, {
          params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
          body: { name: 'Hijacked', status: 'archived' },
        });
        expectMatchesSpec('updateApiKey', response, error);
        expectError(
          { response, body: error },
          {
            operationId: 'updateApiKey',
            status: 404,
            type: 'not_found_error',
            message: `api_key_id: no API key with ID ${key.id}`,
          },
        );
      });
    });
  });

  describe('413 request_too_large', () => {
    it('rejects a body over 1 MiB and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body } = await post(key.id, JSON.stringify({ name: 'x'.repeat(1024 * 1024) }));
        expectError(
          { response, body },
          {
            operationId: 'updateApiKey',
            status: 413,
            type: 'request_too_large',
            message: 'request body is larger than 1 MiB',
          },
        );
      });
    });
  });

  describe('415 invalid_request_error (unsupported media type)', () => {
    describe.each(API_VERSIONS)('in version %s', (version) => {
      const operation: WriteOperation = {
        operationId: 'updateApiKey',
        context: () => ({ server, organizationId: refusals.id }),
        path: async (target, organizationId) =>
          `${API_KEYS_PATH}/${(await createKey(target.store, organizationId, { name: 'never renamed' })).apiKey.id}`,
        body: { name: 'renamed' },
        storeMethod: 'updateApiKey',
        version,
      };
      refusesOtherMediaTypes(operation, () => refusals.adminKey);
    });

    it('rejects a charset other than UTF-8 and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const { response, body } = await post(key.id, JSON.stringify({ name: 'Latin' }), {
          'content-type': 'application/json; charset=iso-8859-1',
        });
        expectError(
          { response, body },
          { operationId: 'updateApiKey', status: 415, type: 'invalid_request_error', message: /^content-type: / },
        );
      });
    });
  });

  describe('429 rate_limit_error', () => {
    it('refuses an update over the admin key budget with retry-after, and changes nothing', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const organization = await limited.createOrganization();
        const { apiKey } = await createKey(limited.store, organization.id, { name: 'Original name' });
        const update = (name: string) =>
          organization.client.POST(KEY_PATH, {
            params: { header: VERSION_HEADER, path: { api_key_id: apiKey.id } },
            body: { name },
          });
        expect((await update('First')).response.status).toBe(200);

        const { error, response } = await update('Refused');

        expectError(
          { response, body: error },
          {
            operationId: 'updateApiKey',
            status: 429,
            type: 'rate_limit_error',
            message: /^too many requests for this admin key/,
          },
        );
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await storedKey(limited.store, organization.id, apiKey.id))?.name).toBe('First');
      } finally {
        await limited.close();
      }
    });
  });

  describe('503 service_unavailable_error', () => {
    it('answers 503 with retry-after when the database is unavailable, logs why, and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        const unavailable = new DatabaseUnavailableError('busy', 'the database is unavailable (busy): locked');
        vi.spyOn(server.store, 'updateApiKey').mockRejectedValueOnce(unavailable);
        const { error, response } = await org.client.POST(KEY_PATH, {
          params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
          body: { name: 'Never saved' },
        });
        expectUnavailable(server.logLines, { response, body: error }, 'updateApiKey');
      });
      const line = server.logLines
        .map((text) => JSON.parse(text))
        .find((entry) => entry.msg === 'database unavailable');
      expect(line).toMatchObject({ write_outcome: 'unknown' });
    });
  });

  describe('500 api_error', () => {
    it('answers a generic error when the store fails, logs the details, and changes nothing', async () => {
      const key = await newKey();

      await expectUnchangedBy(key, async () => {
        vi.spyOn(server.store, 'updateApiKey').mockRejectedValueOnce(new Error('boom: database is locked'));
        const { error, response } = await org.client.POST(KEY_PATH, {
          params: { header: VERSION_HEADER, path: { api_key_id: key.id } },
          body: { name: 'Never saved' },
        });
        expectMatchesSpec('updateApiKey', response, error);
        expectInternalError(server.logLines, { response, body: error }, 'boom: database is locked');
      });
    });
  });
});
