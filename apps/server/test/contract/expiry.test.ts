import { API_VERSION, LATEST_API_VERSION, LATEST_EXPIRY } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  expectError,
  expectMatchesSpec,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { type ApiKeyStatus, nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SECOND = 1_000_000;
const DAY = 86_400 * SECOND;

describe('expiry: the status is computed when a key is read', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  /** Keys by what they are: the stored status, and whether their expiry has passed. */
  const ids: Record<string, string> = {};

  async function storeKey(label: string, status: ApiKeyStatus, expiresAt: number | null) {
    const { apiKey } = await server.store.createApiKey({
      organizationId: org.id,
      name: label,
      createdBy: { id: 'user_expiry', type: 'user' },
      status,
      expiresAt,
    });
    ids[label] = apiKey.id;
  }

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('expiry tests');
    const past = nowMicros() - DAY;
    const future = nowMicros() + DAY;
    await storeKey('active, never expires', 'active', null);
    await storeKey('active, expires later', 'active', future);
    await storeKey('active, expired', 'active', past);
    await storeKey('inactive, expired', 'inactive', past);
    await storeKey('inactive, expires later', 'inactive', future);
    await storeKey('archived, expired', 'archived', past);
    await storeKey('archived, never expires', 'archived', null);
  });
  afterAll(() => server.close());

  async function list(version: string, query: string) {
    const result = await server.request(`${API_KEYS_PATH}?limit=100${query}`, {
      headers: authHeaders(org.adminKey, { 'vendor-version': version }),
    });
    expectMatchesSpec('listApiKeys', result.response, result.body, version as typeof API_VERSION);
    const page = result.body as { data: { id: string; name: string; status: string }[] };
    return Object.fromEntries(page.data.map((key) => [key.name, key.status]));
  }

  it('2026-10-21 shows expired keys as expired, archived ones as archived whatever their expiry', async () => {
    expect(await list(LATEST_API_VERSION, '')).toEqual({
      'active, never expires': 'active',
      'active, expires later': 'active',
      'active, expired': 'expired',
      'inactive, expired': 'expired',
      'inactive, expires later': 'inactive',
      'archived, expired': 'archived',
      'archived, never expires': 'archived',
    });
  });

  it.each([
    ['active', ['active, never expires', 'active, expires later']],
    ['expired', ['active, expired', 'inactive, expired']],
    ['inactive', ['inactive, expires later']],
    ['archived', ['archived, expired', 'archived, never expires']],
  ])('2026-10-21: status=%s returns exactly those keys', async (status, names) => {
    expect(Object.keys(await list(LATEST_API_VERSION, `&status=${status}`)).sort()).toEqual([...names].sort());
  });

  it('2023-06-01 shows expired keys as inactive, and its filters agree', async () => {
    expect(await list(API_VERSION, '')).toEqual({
      'active, never expires': 'active',
      'active, expires later': 'active',
      'active, expired': 'inactive',
      'inactive, expired': 'inactive',
      'inactive, expires later': 'inactive',
      'archived, expired': 'archived',
      'archived, never expires': 'archived',
    });
    expect(Object.keys(await list(API_VERSION, '&status=active')).sort()).toEqual([
      'active, expires later',
      'active, never expires',
    ]);
    expect(Object.keys(await list(API_VERSION, '&status=inactive')).sort()).toEqual([
      'active, expired',
      'inactive, expired',
      'inactive, expires later',
    ]);
  });

  it('2023-06-01 refuses status=expired, which it does not know', async () => {
    const result = await server.request(`${API_KEYS_PATH}?status=expired`, { headers: authHeaders(org.adminKey) });

    expectError(result, {
      operationId: 'listApiKeys',
      status: 400,
      type: 'invalid_request_error',
      message: /^status/,
    });
  });

  it('a key turns expired the moment its expiry passes, with no job involved', async () => {
    const { apiKey } = await server.store.createApiKey({
      organizationId: org.id,
      name: 'about to expire',
      createdBy: { id: 'user_expiry', type: 'user' },
      expiresAt: nowMicros() + 0.5 * SECOND,
    });
    const read = async () =>
      (
        await server.request(apiKeyPath(apiKey.id), {
          headers: authHeaders(org.adminKey, { 'vendor-version': LATEST_API_VERSION }),
        })
      ).body as { status: string };

    expect((await read()).status).toBe('active');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await read()).status).toBe('expired');
    expect(await list(LATEST_API_VERSION, '&status=expired')).toHaveProperty('about to expire', 'expired');
  });
});

describe('the range of expiries: every accepted instant comes back exactly, later ones are refused', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('expiry range');
  });
  afterAll(() => server.close());

  async function send(operationId: 'createApiKey' | 'updateApiKey', path: string, body: unknown) {
    const result = await server.request(path, {
      method: 'POST',
      headers: authHeaders(org.adminKey, { 'vendor-version': LATEST_API_VERSION, 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    expectMatchesSpec(operationId, result.response, result.body, LATEST_API_VERSION);
    return result;
  }

  const keyIds = async () => {
    const result = await server.store.listApiKeys({ organizationId: org.id, limit: 1000 });
    return result.kind === 'page' ? result.keys.map((key) => key.id) : [];
  };

  it.each([
    LATEST_EXPIRY,
    '2199-12-31T23:59:59.999998Z',
    '2150-06-15T12:34:56.123457Z',
    '2199-12-31T22:59:59.999999-01:00',
  ])('creates a key that expires at %s and returns that instant to the microsecond, in every read', async (text) => {
    const created = await send('createApiKey', API_KEYS_PATH, { name: 'far future', expires_at: text });
    const expected = `${new Date(Date.parse(text)).toISOString().slice(0, 19)}${text.slice(19, 26)}Z`;

    expect(created.response.status).toBe(200);
    expect(created.body).toMatchObject({ expires_at: expected, status: 'active' });
    const id = (created.body as { id: string }).id;
    const read = await server.request(apiKeyPath(id), {
      headers: authHeaders(org.adminKey, { 'vendor-version': LATEST_API_VERSION }),
    });
    expect(read.body).toMatchObject({ expires_at: expected });
    const updated = await send('updateApiKey', apiKeyPath(id), { expires_at: text });
    expect(updated.body).toMatchObject({ expires_at: expected });
    await expectEveryReadRenders(id, (created.body as { key: string }).key, expected);
  });

  /** Lists (both versions), gets, verifies and reads the audit trail of a key: each answers 200, as the spec says. */
  async function expectEveryReadRenders(id: string, secret: string, expiresAt: string) {
    const reads: [Parameters<typeof expectMatchesSpec>[0], string, string, RequestInit?][] = [
      ['listApiKeys', LATEST_API_VERSION, `${API_KEYS_PATH}?limit=1000`],
      ['listApiKeys', API_VERSION, `${API_KEYS_PATH}?limit=1000`],
      ['getApiKey', API_VERSION, apiKeyPath(id)],
      ['listAuditEvents', LATEST_API_VERSION, `/v1/organizations/audit_events?target_id=${id}`],
      [
        'verifyApiKey',
        LATEST_API_VERSION,
        '/v1/keys/verify',
        { method: 'POST', body: JSON.stringify({ key: secret }) },
      ],
    ];
    for (const [operationId, version, path, init] of reads) {
      const headers = authHeaders(org.adminKey, { 'vendor-version': version, 'content-type': 'application/json' });
      const { response, body } = await server.request(path, { ...init, headers });
      expect(response.status, `${operationId} ${version}`).toBe(200);
      expectMatchesSpec(operationId, response, body, version as typeof API_VERSION);
      if (operationId === 'verifyApiKey') {
        expect(body).toMatchObject({ valid: true, key: { expires_at: expiresAt } });
      }
    }
  }

  it.each([
    '2200-01-01T00:00:00Z',
    '2199-12-31T23:59:59.999999-00:01',
    '2262-04-11T23:47:16.854775Z',
    '9999-12-31T23:59:59.999999Z',
  ])('refuses an expiry of %s with 400 naming the field, and stores nothing', async (text) => {
    const before = await keyIds();
    expectError(await send('createApiKey', API_KEYS_PATH, { name: 'too far', expires_at: text }), {
      operationId: 'createApiKey',
      status: 400,
      type: 'invalid_request_error',
      message: `expires_at: must be no later than ${LATEST_EXPIRY}`,
      version: LATEST_API_VERSION,
    });
    expect(await keyIds()).toEqual(before);
  });
});
