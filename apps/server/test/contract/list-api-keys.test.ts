import { API_VERSION, API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import {
  API_KEYS_PATH,
  authHeaders,
  createTestKey,
  DEFAULT_ORGANIZATION,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError, nowMicros } from '@apikeys/store';
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
const DAY = 86_400_000_000;

/** A page of keys, in any version, as far as these tests read it. */
interface Page {
  data: { id: string; name: string; status: string; created_at: string }[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

const ids = (keys: readonly { id: string }[]) => keys.map((key) => key.id);

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

  /** A raw GET of the list with the given query string, checked against the document of `version`. */
  async function listRaw(
    version: ApiVersion,
    query: string,
    headers: Record<string, string> = authHeaders(server.adminKey, { 'vendor-version': version }),
  ) {
    const result = await server.request(`${API_KEYS_PATH}${query === '' ? '' : `?${query}`}`, { headers });
    expectMatchesSpec('listApiKeys', result.response, result.body, version);
    return result;
  }

  /** The page an organization's admin key lists in `version`. */
  async function pageOf(version: ApiVersion, adminKey: string, query = ''): Promise<Page> {
    const { response, body } = await listRaw(version, query, authHeaders(adminKey, { 'vendor-version': version }));
    expect(response.status).toBe(200);
    return body as Page;
  }

  const invalid = (version: ApiVersion, message: RegExp | string) =>
    ({ operationId: 'listApiKeys', status: 400, type: 'invalid_request_error', message, version }) as const;

  describe.each(API_VERSIONS)('200 one page of API keys [%s]', (version) => {
    it('returns an empty page with null first_id and last_id when the organization has no keys', async () => {
      const org = await server.createOrganization();

      expect(await pageOf(version, org.adminKey)).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    });

    it('returns the 20 newest keys by default, with has_more and the ids of the first and last key', async () => {
      const org = await server.createOrganization();
      for (let i = 0; i < 25; i++) {
        await createTestKey(server.store, org.id, { name: `key ${i}` });
      }
      const all = await snapshotKeys(server.store, org.id);

      const page = await pageOf(version, org.adminKey);

      expect(ids(page.data)).toEqual(ids(all).slice(0, 20));
      expect(page.has_more).toBe(true);
      expect(page.first_id).toBe(page.data[0]?.id);
      expect(page.last_id).toBe(page.data[19]?.id);
    });

    it('returns exactly `limit` keys, and has_more false when no key is left', async () => {
      const org = await server.createOrganization();
      for (let i = 0; i < 3; i++) {
        await createTestKey(server.store, org.id);
      }

      const two = await pageOf(version, org.adminKey, 'limit=2');
      const three = await pageOf(version, org.adminKey, 'limit=3');

      expect(two.data).toHaveLength(2);
      expect(two.has_more).toBe(true);
      expect(three.data).toHaveLength(3);
      expect(three.has_more).toBe(false);
    });

    it('lists keys created one after another newest first (reverse order of creation)', async () => {
      const org = await server.createOrganization();
      const created: string[] = [];
      for (let i = 0; i < 60; i++) {
        created.push((await createTestKey(server.store, org.id, { name: `key ${i}` })).apiKey.id);
      }

      const page = await pageOf(version, org.adminKey, 'limit=100');

      const createdAt = page.data.map((key) => key.created_at);
      expect(createdAt).toEqual([...createdAt].sort().reverse());
      expect(ids(page.data)).toEqual([...created].reverse());
    });

    it('combines the status, workspace_id and created_by_user_id filters with AND', async () => {
      const org = await server.createOrganization();
      const match = await createTestKey(server.store, org.id, {
        status: 'archived',
        workspaceId: 'wrkspc_a',
        createdBy: { id: 'user_a', type: 'user' },
      });
      for (const [status, workspaceId, createdBy] of [
        ['active', 'wrkspc_a', { id: 'user_a', type: 'user' }],
        ['archived', 'wrkspc_b', { id: 'user_a', type: 'user' }],
        ['archived', 'wrkspc_a', { id: 'user_b', type: 'user' }],
        ['archived', 'wrkspc_a', { id: 'user_a', type: 'service_account' }],
      ] as const) {
        await createTestKey(server.store, org.id, { status, workspaceId, createdBy });
      }

      const page = await pageOf(
        version,
        org.adminKey,
        'status=archived&workspace_id=wrkspc_a&created_by_user_id=user_a',
      );
      const archived = await pageOf(version, org.adminKey, 'status=archived');

      expect(ids(page.data)).toEqual([match.apiKey.id]);
      expect(page.has_more).toBe(false);
      expect(archived.data).toHaveLength(4);
    });

    it('lists only the keys of the organization that owns the admin key, never a secret', async () => {
      const mine = await server.createOrganization();
      const theirs = await server.createOrganization();
      const own = await createTestKey(server.store, mine.id);
      await createTestKey(server.store, theirs.id);

      const { text, body } = await listRaw(version, '', authHeaders(mine.adminKey, { 'vendor-version': version }));

      expect(ids((body as Page).data)).toEqual([own.apiKey.id]);
      expect(text).not.toContain(own.secret);
      expect(text).not.toContain(own.secret.slice(-12));
    });

    it('accepts anthropic-version as an alias of vendor-version', async () => {
      const { response } = await listRaw(version, 'limit=1', {
        'x-api-key': server.adminKey,
        'anthropic-version': version,
      });

      expect(response.status).toBe(200);
    });
  });

  describe('200 one page of API keys [2023-06-01]', () => {
    it('returns each key with the documented fields of 2023-06-01', async () => {
      const org = await server.createOrganization();
      const { apiKey: record } = await createTestKey(server.store, org.id, {
        name: 'Billing',
        workspaceId: 'wrkspc_billing',
        createdBy: { id: 'svc_robot', type: 'service_account' },
        status: 'inactive',
      });
      const apiKey = toApiKeyJson(record, nowMicros());

      const page = await pageOf(API_VERSION, org.adminKey);

      expect(page).toEqual({ data: [apiKey], has_more: false, first_id: apiKey.id, last_id: apiKey.id });
      expect(apiKey).toMatchObject({
        type: 'api_key',
        name: 'Billing',
        workspace_id: 'wrkspc_billing',
        created_by: { id: 'svc_robot', type: 'service_account' },
        status: 'inactive',
      });
    });
  });

  describe('200 one page of API keys [2026-10-21]', () => {
    it('returns each key in the shape of 2026-10-21: scope, principal, expiry and last use, no workspace_id', async () => {
      const org = await server.createOrganization();
      const expiry = '2099-03-04T05:06:07.123456Z';
      const { apiKey } = await createTestKey(server.store, org.id, {
        name: 'Billing',
        workspaceId: 'wrkspc_billing',
        createdBy: { id: 'svc_robot', type: 'service_account' },
        status: 'inactive',
        expiresAt: Date.parse(expiry) * 1000 + 456,
        principal: { type: 'user', id: 'user_alice' },
        permissions: ['billing.*'],
        metadata: { plan: 'pro' },
      });
      const { workspace_id: _, ...shared } = toApiKeyJson(apiKey, nowMicros());

      const page = await pageOf(LATEST, org.adminKey);

      expect(page.data).toEqual([
        {
          ...shared,
          expires_at: expiry,
          last_used_at: null,
          principal: { type: 'user_actor', user_id: 'user_alice' },
          scope: { type: 'workspace', workspace_id: 'wrkspc_billing' },
          status: 'inactive',
          permissions: ['billing.*'],
          metadata: { plan: 'pro' },
        },
      ]);
    });

    it("shows the default workspace's real ID in scope, organization scope without one; the filter agrees", async () => {
      const org = await server.createOrganization();
      const defaultWorkspaceId = (await server.store.getOrganization(org.id))?.defaultWorkspaceId;
      const inDefault = await createTestKey(server.store, org.id, { name: 'default workspace' });
      const organizationWide = await createTestKey(server.store, org.id, {
        name: 'organization',
        scope: 'organization',
        principal: { type: 'service_account', id: 'svcacct_robot' },
      });

      const page = await pageOf(LATEST, org.adminKey);
      const filtered = await pageOf(LATEST, org.adminKey, `workspace_id=${defaultWorkspaceId}`);

      expect(defaultWorkspaceId).toMatch(/^wrkspc_/);
      expect(Object.fromEntries(page.data.map((key) => [key.id, (key as { scope?: unknown }).scope]))).toEqual({
        [inDefault.apiKey.id]: { type: 'workspace', workspace_id: defaultWorkspaceId },
        [organizationWide.apiKey.id]: { type: 'organization' },
      });
      expect(ids(filtered.data)).toEqual([inDefault.apiKey.id]);
    });

    it('shows a key past its expiry as expired, and status=expired returns exactly those (archived stays archived)', async () => {
      const org = await server.createOrganization();
      const past = nowMicros() - DAY;
      const keys = {
        'never expires': await createTestKey(server.store, org.id, { name: 'never expires' }),
        'active, expired': await createTestKey(server.store, org.id, { name: 'active, expired', expiresAt: past }),
        'inactive, expired': await createTestKey(server.store, org.id, {
          name: 'inactive, expired',
          status: 'inactive',
          expiresAt: past,
        }),
        'archived, expired': await createTestKey(server.store, org.id, {
          name: 'archived, expired',
          status: 'archived',
          expiresAt: past,
        }),
      };
      const statuses = (page: Page) => Object.fromEntries(page.data.map((key) => [key.name, key.status]));

      expect(statuses(await pageOf(LATEST, org.adminKey))).toEqual({
        'never expires': 'active',
        'active, expired': 'expired',
        'inactive, expired': 'expired',
        'archived, expired': 'archived',
      });
      expect(ids((await pageOf(LATEST, org.adminKey, 'status=expired')).data).sort()).toEqual(
        [keys['active, expired'].apiKey.id, keys['inactive, expired'].apiKey.id].sort(),
      );
      expect(ids((await pageOf(LATEST, org.adminKey, 'status=active')).data)).toEqual([
        keys['never expires'].apiKey.id,
      ]);
    });

    it('takes an empty filter as no filter, as the official SDKs send a null one', async () => {
      const org = await server.createOrganization();
      const { apiKey } = await createTestKey(server.store, org.id);

      const page = await pageOf(LATEST, org.adminKey, 'status=&workspace_id=&created_by_user_id=');

      expect(ids(page.data)).toEqual([apiKey.id]);
    });
  });

  describe.each(API_VERSIONS)('400 invalid_request_error [%s]', (version) => {
    it.each([
      ['limit=0', /^limit: /],
      ['limit=1001', /^limit: /],
      ['limit=abc', /^limit: /],
      ['limit=1.5', /^limit: /],
      ['limit=', /^limit: /],
      ['limit=1&limit=2', /^limit: /],
      ['status=Active', /^status: must be one of "active", "inactive", "archived"/],
      ['after_id=', /^after_id: /],
      ['before_id=', /^before_id: /],
      [`after_id=${'a'.repeat(256)}`, /^after_id: /],
      [`workspace_id=${'w'.repeat(256)}`, /^workspace_id: /],
      ['page=2', /^page: unknown query parameter/],
      ['after_id=apikey_000000000000000000000000', /^after_id: no API key with ID apikey_000000000000000000000000$/],
      ['before_id=apikey_000000000000000000000000', /^before_id: no API key with ID apikey_000000000000000000000000$/],
    ])('rejects ?%s with a message that names the parameter', async (query, message) => {
      expectError(await listRaw(version, query), invalid(version, message));
    });

    it('rejects before_id together with after_id', async () => {
      const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

      const result = await listRaw(version, `before_id=${apiKey.id}&after_id=${apiKey.id}`);

      expectError(result, invalid(version, /^before_id: .*after_id/));
    });

    it('rejects a cursor that names a key of another organization, as if it did not exist', async () => {
      const other = await server.createOrganization();
      const { apiKey } = await createTestKey(server.store, other.id);

      const result = await listRaw(version, `after_id=${apiKey.id}`);

      expectError(result, invalid(version, `after_id: no API key with ID ${apiKey.id}`));
    });
  });

  describe('400 invalid_request_error [2023-06-01]', () => {
    it.each([
      [
        'an unknown status',
        'status=deleted',
        /^status: must be one of "active", "inactive", "archived" \(query parameter\)$/,
      ],
      ['expired, a status this version does not have', 'status=expired', /^status: must be one of "active", /],
      ['an empty status', 'status=', /^status: /],
      ['an empty workspace_id', 'workspace_id=', /^workspace_id: /],
      ['an empty created_by_user_id', 'created_by_user_id=', /^created_by_user_id: /],
    ])('rejects %s', async (_, query, message) => {
      expectError(await listRaw(API_VERSION, query), invalid(API_VERSION, message));
    });

    it('rejects a request without a version header', async () => {
      const result = await listRaw(API_VERSION, '', { 'x-api-key': server.adminKey });

      expectError(result, invalid(API_VERSION, 'vendor-version: header is required'));
    });

    it('rejects an unsupported version, naming the value sent and the supported versions', async () => {
      const result = await listRaw(API_VERSION, '', authHeaders(server.adminKey, { 'vendor-version': '2020-01-01' }));

      expectError(result, invalid(API_VERSION, /^vendor-version: .*"2020-01-01".*2023-06-01.*2026-10-21/));
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    it.each([
      ['status=deleted', /^status: must be one of "active", "inactive", "archived", "expired" \(query parameter\)$/],
      ['status=EXPIRED', /^status: must be one of "active", "inactive", "archived", "expired" \(query parameter\)$/],
    ])('rejects ?%s, naming the four statuses of this version', async (query, message) => {
      expectError(await listRaw(LATEST, query), invalid(LATEST, message));
    });
  });

  const operation = (version: ApiVersion): RefusedOperation => ({
    operationId: 'listApiKeys',
    version,
    context: () => ({ server, organizationId: DEFAULT_ORGANIZATION.id }),
    path: async () => API_KEYS_PATH,
    storeMethod: 'listApiKeys',
  });
  const adminKey = () => server.adminKey;

  describe.each(API_VERSIONS)('401 authentication_error [%s]', (version) => refusesUnauthenticated(operation(version)));

  describe.each(API_VERSIONS)('403 permission_error [%s]', (version) => {
    refusesRegularKeys(operation(version));
    refusesVerifierKeys(operation(version));
  });

  describe.each(API_VERSIONS)('429 rate_limit_error [%s]', (version) => {
    refusesOverBudget(operation(version));

    it('refuses failed authentications from one address past the limit with 429 instead of 401', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 2, burst: 2, authFailuresPerMinute: 1 } });
      try {
        const guess = () =>
          limited.request(API_KEYS_PATH, {
            headers: authHeaders(`sk-adm-${'G'.repeat(43)}`, { 'vendor-version': version }),
          });
        expect((await guess()).response.status).toBe(401);

        const result = await guess();

        expectError(result, {
          operationId: 'listApiKeys',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many failed authentications; retry after \d+ seconds?$/,
          version,
        });
        expect(Number(result.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      } finally {
        await limited.close();
      }
    });
  });

  describe.each(API_VERSIONS)('503 service_unavailable_error [%s]', (version) => {
    answersUnavailable(operation(version), adminKey);

    it('answers 503 when authentication cannot reach the database', async () => {
      const unseen = await adminKeyNotYetCached();
      const unavailable = new DatabaseUnavailableError('unreachable', 'the database is unavailable: ECONNREFUSED');
      vi.spyOn(server.store, 'findCredential').mockRejectedValueOnce(unavailable);

      const result = await listRaw(version, '', authHeaders(unseen, { 'vendor-version': version }));

      expectUnavailable(server.logLines, result, 'listApiKeys', version);
    });
  });

  describe.each(API_VERSIONS)('500 api_error [%s]', (version) => {
    answersInternalErrors(operation(version), adminKey);

    it('answers a generic error when authentication cannot reach the store', async () => {
      const unseen = await adminKeyNotYetCached();
      vi.spyOn(server.store, 'findCredential').mockRejectedValueOnce(new Error('boom: credential lookup failed'));

      const result = await listRaw(version, '', authHeaders(unseen, { 'vendor-version': version }));

      expectInternalError(server.logLines, result, 'boom: credential lookup failed');
    });
  });
});
