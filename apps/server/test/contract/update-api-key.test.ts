import { API_VERSION, API_VERSIONS, type ApiVersion, LATEST_API_VERSION, LATEST_EXPIRY } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  createTestKey,
  type ExpectedError,
  expectError,
  expectMatchesSpec,
  jsonPostHeaders,
  postRaw,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { type EpochMicros, nowMicros } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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

const LATEST = LATEST_API_VERSION;
const EMOJI = '\u{1F511}';
const SECOND = 1_000_000;

/** A key, in any version, as far as these tests read it. */
type Key = { id: string; name: string; status: string } & Record<string, unknown>;

describe('updateApiKey', () => {
  let server: TestServer;
  /** Each test works on keys of its own organization, so list assertions see only that test's keys. */
  let org: TestOrganizationWithClient;
  /** The organization the shared refusals work in. */
  let refused: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    refused = await server.createOrganization('refusals');
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A key of a new organization, as `version` shows it. */
  async function newKey(version: ApiVersion, expiresAt: EpochMicros | null = null): Promise<Key> {
    org = await server.createOrganization();
    const { apiKey } = await createTestKey(server.store, org.id, {
      name: 'Original name',
      workspaceId: 'wrkspc_update',
      createdBy: { id: 'user_owner', type: 'user' },
      status: 'active',
      expiresAt,
    });
    return getKey(version, apiKey.id);
  }

  const headers = (version: ApiVersion, overrides: Record<string, string | undefined> = {}) =>
    jsonPostHeaders(org.adminKey, { 'vendor-version': version, ...overrides });

  /** Reads a key through the API in `version`, checking the response against its document. */
  async function getKey(version: ApiVersion, id: string): Promise<Key> {
    const { response, body } = await server.request(apiKeyPath(id), { headers: headers(version) });
    expectMatchesSpec('getApiKey', response, body, version);
    return body as Key;
  }

  /** Lists the test organization's keys through the API in `version`, checked against its document. */
  async function listKeys(version: ApiVersion, query = ''): Promise<Key[]> {
    const { response, body } = await server.request(`${API_KEYS_PATH}?${query}`, { headers: headers(version) });
    expectMatchesSpec('listApiKeys', response, body, version);
    return (body as { data: Key[] }).data;
  }

  /** A raw POST of `body` in `version`; `undefined` in `overrides` leaves a header out. */
  async function post(
    version: ApiVersion,
    id: string,
    body: string | Uint8Array,
    overrides: Record<string, string | undefined> = {},
  ) {
    const result = await postRaw(server, id, body, headers(version, overrides));
    expectMatchesSpec('updateApiKey', result.response, result.body, version);
    return result;
  }

  /** Sends `body` as JSON in `version`. */
  const update = (version: ApiVersion, id: string, body: unknown) => post(version, id, JSON.stringify(body));

  /** Asserts that `reject` is refused and that the key reads the same through the API and the store after it. */
  async function expectUnchangedBy(version: ApiVersion, key: Key, reject: () => Promise<void>): Promise<void> {
    const stored = await server.store.getApiKey(org.id, key.id);

    await reject();

    expect(await getKey(version, key.id)).toEqual(key);
    expect(await server.store.getApiKey(org.id, key.id)).toEqual(stored);
  }

  const invalid = (version: ApiVersion, message: RegExp | string): ExpectedError => ({
    operationId: 'updateApiKey',
    status: 400,
    type: 'invalid_request_error',
    message,
    version,
  });

  describe.each(API_VERSIONS)('200 the API key as updated [%s]', (version) => {
    it('renames a key, returns it, and a following get and list show the new name', async () => {
      const key = await newKey(version);

      const { response, body } = await update(version, key.id, { name: 'Billing service' });

      expect(response.status).toBe(200);
      expect(body).toEqual({ ...key, name: 'Billing service' });
      expect(await getKey(version, key.id)).toEqual(body);
      expect(await listKeys(version)).toEqual([body]);
    });

    it('changes the status, and a list filtered by the new status shows the key', async () => {
      const key = await newKey(version);

      const { body } = await update(version, key.id, { status: 'inactive' });

      expect(body).toEqual({ ...key, status: 'inactive' });
      expect(await getKey(version, key.id)).toEqual(body);
      expect(await listKeys(version, 'status=inactive')).toEqual([body]);
      expect(await listKeys(version, 'status=active')).toEqual([]);
    });

    it('renames and archives in one request', async () => {
      const key = await newKey(version);

      const { body } = await update(version, key.id, { name: 'Old billing service', status: 'archived' });

      expect(body).toEqual({ ...key, name: 'Old billing service', status: 'archived' });
      expect(await listKeys(version, 'status=archived')).toEqual([body]);
    });

    it('changes nothing and returns the key when the body is {}', async () => {
      const key = await newKey(version);

      const { body } = await update(version, key.id, {});

      expect(body).toEqual(key);
      expect(await getKey(version, key.id)).toEqual(key);
    });

    it('leaves the status unchanged when it is null', async () => {
      const key = await newKey(version);

      const alone = await update(version, key.id, { status: null });
      const withName = await update(version, key.id, { name: 'Renamed', status: null });

      expect(alone.body).toEqual(key);
      expect(withName.body).toEqual({ ...key, name: 'Renamed' });
      expect(await getKey(version, key.id)).toEqual({ ...key, name: 'Renamed' });
    });

    it('can switch an inactive key back on', async () => {
      const key = await newKey(version);
      await server.store.updateApiKey(org.id, key.id, { status: 'inactive' });

      const { body } = await update(version, key.id, { status: 'active' });

      expect(body).toEqual(key);
    });

    it.each([
      ['1 character', 'x'],
      ['500 ASCII characters', 'n'.repeat(500)],
      ['500 emoji: 500 code points, 1000 UTF-16 units', EMOJI.repeat(500)],
      ['combining marks and right-to-left text', 'Cafe\u0301 \u05E9\u05DC\u05D5\u05DD'],
    ])('accepts a name of %s and returns it intact', async (_label, name) => {
      const key = await newKey(version);

      const { response, body } = await update(version, key.id, { name });

      expect(response.status).toBe(200);
      expect((body as Key).name).toBe(name);
      expect((await getKey(version, key.id)).name).toBe(name);
      expect((await listKeys(version))[0]?.name).toBe(name);
    });

    it('accepts application/json with an explicit utf-8 charset and anthropic-version', async () => {
      const key = await newKey(version);

      const { response, body } = await post(version, key.id, JSON.stringify({ name: 'Charset' }), {
        'content-type': 'application/json; charset=utf-8',
        'vendor-version': undefined,
        'anthropic-version': version,
      });

      expect(response.status).toBe(200);
      expect(body).toEqual({ ...key, name: 'Charset' });
    });
  });

  describe('200 the API key as updated [2023-06-01]', () => {
    it('renames a key through the typed client of 2023-06-01', async () => {
      const key = await newKey(API_VERSION);

      const { data, error, response } = await org.client.POST('/v1/organizations/api_keys/{api_key_id}', {
        params: { header: { 'vendor-version': API_VERSION }, path: { api_key_id: key.id } },
        body: { name: 'Typed' },
      });

      expect(error).toBeUndefined();
      expectMatchesSpec('updateApiKey', response, data);
      expect(data).toEqual({ ...key, name: 'Typed' });
    });
  });

  describe('200 the API key as updated [2026-10-21]', () => {
    it('returns the key in the shape of 2026-10-21, with its scope, principal, expiry and last use', async () => {
      const key = await newKey(LATEST);

      const { body } = await update(LATEST, key.id, { name: 'Shaped' });

      expect(body).toEqual({ ...key, name: 'Shaped' });
      expect(Object.keys(body as Key).sort()).toEqual(
        [
          'id',
          'type',
          'name',
          'created_at',
          'created_by',
          'expires_at',
          'last_used_at',
          'partial_key_hint',
          'principal',
          'scope',
          'status',
          'permissions',
          'metadata',
        ].sort(),
      );
      expect(body).toMatchObject({ scope: { type: 'workspace', workspace_id: 'wrkspc_update' }, expires_at: null });
    });

    it('sets an expiry, returned to the microsecond, and null removes it', async () => {
      const key = await newKey(LATEST);

      const set = await update(LATEST, key.id, { expires_at: '2099-03-04T05:06:07.5Z' });
      expect(set.body).toEqual({ ...key, expires_at: '2099-03-04T05:06:07.500000Z' });
      expect(await getKey(LATEST, key.id)).toEqual(set.body);

      const removed = await update(LATEST, key.id, { expires_at: null });
      expect(removed.body).toEqual(key);
    });

    it('accepts an expiry with a time zone offset and the latest expiry, and shows them in UTC', async () => {
      const key = await newKey(LATEST);

      expect((await update(LATEST, key.id, { expires_at: '2099-01-31T01:00:00+01:00' })).body).toMatchObject({
        expires_at: '2099-01-31T00:00:00.000000Z',
      });
      expect((await update(LATEST, key.id, { expires_at: LATEST_EXPIRY })).body).toMatchObject({
        expires_at: LATEST_EXPIRY,
      });
    });

    it('a null name, like an omitted one, leaves the name', async () => {
      const key = await newKey(LATEST);

      const { body } = await update(LATEST, key.id, { name: null, status: 'inactive' });

      expect(body).toEqual({ ...key, status: 'inactive' });
    });

    it('renames an expired key, which stays expired, and archives it', async () => {
      const key = await newKey(LATEST, nowMicros() - SECOND);
      expect(key.status).toBe('expired');

      expect((await update(LATEST, key.id, { name: 'renamed' })).body).toEqual({ ...key, name: 'renamed' });
      expect((await update(LATEST, key.id, { status: 'archived' })).body).toMatchObject({ status: 'archived' });
    });
  });

  describe.each(API_VERSIONS)('400 invalid_request_error [%s]', (version) => {
    it.each([
      ['an empty name', { name: '' }, /^name: must NOT have fewer than 1 characters/],
      ['a name of 501 emoji', { name: EMOJI.repeat(501) }, /^name: must NOT have more than 500 characters/],
      ['a name of 501 ASCII characters', { name: 'n'.repeat(501) }, /^name: must NOT have more than 500 characters/],
      ['a numeric name', { name: 42 }, /^name: must be string/],
      ['an unknown status', { status: 'deleted' }, /^status: must be one of "active", "inactive", "archived", null/],
      ['the status expired, which only the clock sets', { status: 'expired' }, /^status: must be one of /],
      ['a status in the wrong case', { status: 'ACTIVE' }, /^status: /],
      ['an unknown field', { secret: 'sk-api-x' }, /^secret: unknown field/],
      ['a valid name with an invalid status', { name: 'Half applied', status: 'bogus' }, /^status: /],
      ['an array', [], /^body: /],
      ['a string', 'rename me', /^body: /],
      ['a number', 7, /^body: /],
    ])('rejects %s and changes nothing', async (_label, body, message) => {
      const key = await newKey(version);

      await expectUnchangedBy(version, key, async () => {
        expectError(await update(version, key.id, body), invalid(version, message));
      });
    });

    it.each([
      ['malformed JSON', '{"name": "unterminated'],
      ['a JSON null', 'null'],
      ['an empty body (the request body is required)', ''],
    ])('rejects %s and changes nothing', async (_label, text) => {
      const key = await newKey(version);

      await expectUnchangedBy(version, key, async () => {
        expectError(await post(version, key.id, text), invalid(version, /^body: /));
      });
    });

    it('rejects a query parameter the operation does not declare and changes nothing', async () => {
      const key = await newKey(version);

      await expectUnchangedBy(version, key, async () => {
        const result = await server.request(`${apiKeyPath(key.id)}?dry_run=true`, {
          method: 'POST',
          headers: headers(version),
          body: JSON.stringify({ name: 'Query' }),
        });
        expectError(result, invalid(version, /^dry_run: unknown query parameter/));
      });
    });

    it.each([
      ['active', { status: 'active' }],
      ['inactive', { status: 'inactive' }],
    ])('refuses to make an expired key %s again, and changes nothing', async (_, body) => {
      const key = await newKey(version, nowMicros() - SECOND);

      await expectUnchangedBy(version, key, async () => {
        const message = 'status: the key has expired; an expired key can only be renamed or archived';
        expectError(await update(version, key.id, body), invalid(version, message));
      });
    });
  });

  describe('400 invalid_request_error [2023-06-01]', () => {
    it.each([
      ['a null name (name is not nullable in this version)', { name: null }, /^name: must be string/],
      ['an expiry, which this version does not have', { expires_at: '2099-01-01T00:00:00Z' }, /^expires_at: /],
      ['an unknown field next to a valid one', { name: 'Fine', expires_at: null }, /^expires_at: unknown field/],
    ])('rejects %s and changes nothing', async (_label, body, message) => {
      const key = await newKey(API_VERSION);

      await expectUnchangedBy(API_VERSION, key, async () => {
        expectError(await update(API_VERSION, key.id, body), invalid(API_VERSION, message));
      });
    });

    it.each([
      ['without a version header', { 'vendor-version': undefined }, 'vendor-version: header is required'],
      ['of an unsupported version', { 'vendor-version': '2022-01-01' }, /^vendor-version: .*"2022-01-01"/],
    ])('rejects a request %s and changes nothing', async (_label, overrides, message) => {
      const key = await newKey(API_VERSION);

      await expectUnchangedBy(API_VERSION, key, async () => {
        const result = await post(API_VERSION, key.id, JSON.stringify({ name: 'No version' }), overrides);
        expectError(result, invalid(API_VERSION, message));
      });
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    it.each([
      ['an expiry in the past', { expires_at: '2001-01-01T00:00:00Z' }, 'expires_at: must lie in the future'],
      [
        'an expiry later than the latest one',
        { expires_at: '9999-12-31T23:59:59.999999Z' },
        `expires_at: must be no later than ${LATEST_EXPIRY}`,
      ],
      ['an expiry without a time zone', { expires_at: '2099-01-01T00:00:00' }, /^expires_at: /],
      ['a date that does not exist', { expires_at: '2099-02-30T00:00:00Z' }, /^expires_at: /],
      ['more than six fractional digits', { expires_at: '2099-01-01T00:00:00.1234567Z' }, /^expires_at: /],
      ['an expiry that is a number', { expires_at: 4102444800 }, /^expires_at: /],
    ])('rejects %s and changes nothing', async (_label, body, message) => {
      const key = await newKey(LATEST);

      await expectUnchangedBy(LATEST, key, async () => {
        expectError(await update(LATEST, key.id, body), invalid(LATEST, message));
      });
    });

    it.each([
      ['a new expiry', { expires_at: '2099-01-01T00:00:00Z' }],
      ['no expiry', { expires_at: null }],
    ])('refuses to give an expired key %s, and changes nothing', async (_, body) => {
      const key = await newKey(LATEST, nowMicros() - SECOND);

      await expectUnchangedBy(LATEST, key, async () => {
        const message = 'expires_at: the key has expired; an expired key can only be renamed or archived';
        expectError(await update(LATEST, key.id, body), invalid(LATEST, message));
      });
    });
  });

  const operation = (version: ApiVersion): RefusedOperation => ({
    operationId: 'updateApiKey',
    version,
    context: () => ({ server, organizationId: refused.id }),
    path: async (on, organizationId) => apiKeyPath((await createTestKey(on.store, organizationId)).apiKey.id),
    body: { name: 'Never saved', status: 'archived' },
    storeMethod: 'updateApiKey',
  });
  const adminKey = () => refused.adminKey;

  describe.each(API_VERSIONS)('401 authentication_error [%s]', (version) => refusesUnauthenticated(operation(version)));

  describe.each(API_VERSIONS)('403 permission_error [%s]', (version) => {
    refusesRegularKeys(operation(version));
    refusesVerifierKeys(operation(version));

    it('refuses a regular API key trying to rename itself and changes nothing', async () => {
      org = await server.createOrganization();
      const { apiKey, secret } = await createTestKey(server.store, org.id, { name: 'Original name' });
      const self = await getKey(version, apiKey.id);

      await expectUnchangedBy(version, self, async () => {
        const result = await post(version, self.id, JSON.stringify({ name: 'Self-renamed' }), { 'x-api-key': secret });
        expectError(result, { ...invalid(version, /admin key/), status: 403, type: 'permission_error' });
      });
    });
  });

  describe.each(API_VERSIONS)('404 not_found_error [%s]', (version) => {
    const notFound = (id: string): ExpectedError => ({
      operationId: 'updateApiKey',
      status: 404,
      type: 'not_found_error',
      message: `api_key_id: no API key with ID ${id}`,
      version,
    });

    it.each([
      ['a rename', { name: 'Ghost' }],
      ['an empty update', {}],
    ])('answers 404 naming the ID for %s of a key that does not exist', async (_, body) => {
      org = await server.createOrganization();
      const id = 'apikey_000000000000000000000000';

      expectError(await update(version, id, body), notFound(id));
    });

    it('answers a key of another organization as one that does not exist, and leaves it unchanged', async () => {
      const key = await newKey(version);
      const owner = org;
      org = await server.createOrganization();

      const result = await update(version, key.id, { name: 'Hijacked', status: 'archived' });

      expectError(result, notFound(key.id));
      org = owner;
      expect(await getKey(version, key.id)).toEqual(key);
    });
  });

  describe.each(API_VERSIONS)('413 request_too_large [%s]', (version) =>
    refusesLargeBodies(operation(version), adminKey),
  );

  describe.each(API_VERSIONS)('415 invalid_request_error (unsupported media type) [%s]', (version) => {
    refusesOtherMediaTypes(operation(version), adminKey);

    it.each([
      ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', /^content-type: .*application\/json$/],
      ['no content-type', undefined, /^content-type: .*application\/json$/],
      ['a charset other than UTF-8', 'application/json; charset=iso-8859-1', /^content-type: /],
    ])('rejects a JSON body sent as %s and changes nothing', async (_label, contentType, message) => {
      const key = await newKey(version);
      // A byte body, unlike a string, gets no default content type from fetch.
      const json = new TextEncoder().encode(JSON.stringify({ name: 'Wrong type' }));

      await expectUnchangedBy(version, key, async () => {
        const result = await post(version, key.id, json, { 'content-type': contentType });
        expectError(result, { ...invalid(version, message), status: 415 });
      });
    });
  });

  describe.each(API_VERSIONS)('429 rate_limit_error [%s]', (version) => refusesOverBudget(operation(version)));

  describe.each(API_VERSIONS)('503 service_unavailable_error [%s]', (version) =>
    answersUnavailable(operation(version), adminKey),
  );

  describe.each(API_VERSIONS)('500 api_error [%s]', (version) => answersInternalErrors(operation(version), adminKey));
});
