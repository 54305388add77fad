import { type ApiKey, type ApiKeyList, type ApiKeyStatus, LATEST_API_VERSION } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import {
  authHeaders,
  createTestKey,
  DEFAULT_ORGANIZATION,
  type ErrorBody,
  expectError,
  expectMatchesSpec,
  nowMicros,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const LIST = '/v1/organizations/api_keys';
const SHARED_WORKSPACE = 'wrkspc_shared';
const SHARED_USER = 'user_shared';
const STATUSES: ApiKeyStatus[] = ['active', 'inactive', 'archived'];

interface Tenant {
  label: string;
  organizationId: string;
  adminKey: string;
  keys: ApiKey[];
}

/** Filters as query parameters, and the same filter as a predicate over keys. */
interface Filter {
  name: string;
  query: Record<string, string>;
  matches: (key: ApiKey) => boolean;
}

const FILTERS: Filter[] = [
  { name: 'no filter', query: {}, matches: () => true },
  ...STATUSES.map((status) => ({
    name: `status=${status}`,
    query: { status },
    matches: (key: ApiKey) => key.status === status,
  })),
  {
    name: `workspace_id=${SHARED_WORKSPACE}`,
    query: { workspace_id: SHARED_WORKSPACE },
    matches: (key) => key.workspace_id === SHARED_WORKSPACE,
  },
  {
    name: `created_by_user_id=${SHARED_USER}`,
    query: { created_by_user_id: SHARED_USER },
    matches: (key) => key.created_by.id === SHARED_USER,
  },
  {
    name: 'all three filters',
    query: { status: 'active', workspace_id: SHARED_WORKSPACE, created_by_user_id: SHARED_USER },
    matches: (key) =>
      key.status === 'active' && key.workspace_id === SHARED_WORKSPACE && key.created_by.id === SHARED_USER,
  },
];

/** Creates keys over every combination of shared and own workspace, shared and own user, and status. */
async function seedTenant(server: TestServer, label: string, organizationId: string, adminKey: string) {
  const keys: ApiKey[] = [];
  for (const workspaceId of [SHARED_WORKSPACE, null, `wrkspc_${label}`]) {
    for (const userId of [SHARED_USER, `user_${label}`]) {
      for (const status of STATUSES) {
        const { apiKey } = await createTestKey(server.store, organizationId, {
          name: `${label} ${workspaceId} ${userId} ${status}`,
          workspaceId,
          createdBy: { id: userId, type: 'user' },
          status,
        });
        keys.push(toApiKeyJson(apiKey, nowMicros()));
      }
    }
  }
  return { label, organizationId, adminKey, keys };
}

describe('tenant isolation', () => {
  let server: TestServer;
  let tenants: [Tenant, Tenant];

  beforeAll(async () => {
    server = await startTestServer();
    const other = await server.store.createOrganization('Other organization');
    const { secret } = await server.store.createAdminKey({ organizationId: other.id, name: 'other admin' });
    tenants = [
      await seedTenant(server, 'a', DEFAULT_ORGANIZATION.id, server.adminKey),
      await seedTenant(server, 'b', other.id, secret),
    ];
  });
  afterAll(() => server.close());

  const pairs = () => [
    { own: tenants[0], other: tenants[1] },
    { own: tenants[1], other: tenants[0] },
  ];

  async function listAll(tenant: Tenant, query: Record<string, string>): Promise<ApiKeyList> {
    const search = new URLSearchParams({ ...query, limit: '1000' });
    const result = await server.request(`${LIST}?${search}`, { headers: authHeaders(tenant.adminKey) });
    expect(result.response.status, result.text).toBe(200);
    expectMatchesSpec('listApiKeys', result.response, result.body);
    return result.body as ApiKeyList;
  }

  describe.each(FILTERS)('listing with $name', (filter) => {
    it("shows each organization exactly its own matching keys, never the other's", async () => {
      for (const { own, other } of pairs()) {
        const page = await listAll(own, filter.query);

        const ids = page.data.map((key) => key.id);
        const expected = own.keys.filter(filter.matches).map((key) => key.id);
        expect(ids.sort()).toEqual(expected.sort());
        expect(expected.length).toBeGreaterThan(0);
        const foreign = new Set(other.keys.map((key) => key.id));
        expect(ids.filter((id) => foreign.has(id))).toEqual([]);
      }
    });
  });

  it('keeps every page of a paginated walk inside the organization, in both directions', async () => {
    for (const { own } of pairs()) {
      const forward: string[] = [];
      let cursor: string | null = null;
      let lastPage: ApiKeyList | undefined;
      do {
        const query: string = cursor === null ? 'limit=4' : `limit=4&after_id=${cursor}`;
        const result = await server.request(`${LIST}?${query}`, { headers: authHeaders(own.adminKey) });
        expect(result.response.status, result.text).toBe(200);
        lastPage = result.body as ApiKeyList;
        forward.push(...lastPage.data.map((key) => key.id));
        cursor = lastPage.has_more ? lastPage.last_id : null;
      } while (cursor !== null);
      expect([...forward].sort()).toEqual(own.keys.map((key) => key.id).sort());

      const backward: string[] = [];
      let before = lastPage.first_id;
      while (before !== null) {
        const result = await server.request(`${LIST}?limit=4&before_id=${before}`, {
          headers: authHeaders(own.adminKey),
        });
        expect(result.response.status, result.text).toBe(200);
        const page = result.body as ApiKeyList;
        backward.unshift(...page.data.map((key) => key.id));
        before = page.has_more ? page.first_id : null;
      }
      expect([...backward, ...lastPage.data.map((key) => key.id)]).toEqual(forward);
    }
  });

  it.each(['before_id', 'after_id'])("refuses another organization's key as %s with 400", async (parameter) => {
    for (const { own, other } of pairs()) {
      for (const foreignKey of [other.keys[0], other.keys.at(-1)]) {
        const result = await server.request(`${LIST}?${parameter}=${foreignKey?.id}`, {
          headers: authHeaders(own.adminKey),
        });
        expectError(result, {
          operationId: 'listApiKeys',
          status: 400,
          type: 'invalid_request_error',
          message: new RegExp(`^${parameter}: `),
        });
      }
    }
  });

  it("answers a get of another organization's key exactly like a get of a key that does not exist", async () => {
    for (const { own, other } of pairs()) {
      const foreignId = other.keys[0]?.id ?? '';
      const missingId = 'apikey_000000000000000000000000';

      const foreign = await server.request(`${LIST}/${foreignId}`, { headers: authHeaders(own.adminKey) });
      const missing = await server.request(`${LIST}/${missingId}`, { headers: authHeaders(own.adminKey) });

      const foreignError = expectError(foreign, {
        operationId: 'getApiKey',
        status: 404,
        type: 'not_found_error',
        message: /^api_key_id: /,
      });
      const missingError = expectError(missing, {
        operationId: 'getApiKey',
        status: 404,
        type: 'not_found_error',
        message: /^api_key_id: /,
      });
      expect(foreignError.error.message.replace(foreignId, '<id>')).toBe(
        missingError.error.message.replace(missingId, '<id>'),
      );
    }
  });

  it.each([
    ['a rename', { name: 'hijacked' }],
    ['a status change', { status: 'archived' }],
    ['a rename and a status change', { name: 'hijacked', status: 'inactive' }],
    ['an empty update', {}],
    ['a null status', { status: null }],
  ])("answers %s of another organization's key with 404 and leaves the key unchanged", async (_label, change) => {
    for (const { own, other } of pairs()) {
      const before = {
        own: await snapshotKeys(server.store, own.organizationId),
        other: await snapshotKeys(server.store, other.organizationId),
      };
      for (const foreignKey of other.keys) {
        const result = await server.request(`${LIST}/${foreignKey.id}`, {
          method: 'POST',
          headers: authHeaders(own.adminKey, { 'content-type': 'application/json' }),
          body: JSON.stringify(change),
        });

        const error: ErrorBody = expectError(result, {
          operationId: 'updateApiKey',
          status: 404,
          type: 'not_found_error',
          message: /^api_key_id: /,
        });
        expect(error.error.message).not.toContain(other.organizationId);
        const stored = await server.store.getApiKey(other.organizationId, foreignKey.id);
        expect(stored && toApiKeyJson(stored, nowMicros())).toEqual(foreignKey);
      }
      expect(await snapshotKeys(server.store, other.organizationId)).toEqual(before.other);
      expect(await snapshotKeys(server.store, own.organizationId)).toEqual(before.own);
    }
  });

  describe('the audit trail', () => {
    const EVENTS = '/v1/organizations/audit_events';
    const latest = (adminKey: string) => authHeaders(adminKey, { 'vendor-version': LATEST_API_VERSION });

    async function events(tenant: Tenant, query = ''): Promise<{ id: string; target: { id: string } }[]> {
      const result = await server.request(`${EVENTS}?limit=1000${query}`, { headers: latest(tenant.adminKey) });
      expect(result.response.status, result.text).toBe(200);
      expectMatchesSpec('listAuditEvents', result.response, result.body, LATEST_API_VERSION);
      return (result.body as { data: { id: string; target: { id: string } }[] }).data;
    }

    it("shows each organization only the events of its own keys, even filtered by the other's key", async () => {
      for (const { own, other } of pairs()) {
        const mine = new Set([own.organizationId, ...own.keys.map((key) => key.id)]);
        const seen = await events(own);

        expect(seen.length).toBeGreaterThanOrEqual(own.keys.length);
        expect(seen.filter((event) => !mine.has(event.target.id) && !event.target.id.startsWith('adminkey_'))).toEqual(
          [],
        );
        expect(await events(own, `&target_id=${other.keys[0]?.id}`)).toEqual([]);
      }
    });

    it("answers a get of another organization's event with 404, and refuses it as a cursor", async () => {
      for (const { own, other } of pairs()) {
        const [foreign] = await events(other);

        const get = await server.request(`${EVENTS}/${foreign?.id}`, { headers: latest(own.adminKey) });
        const cursor = await server.request(`${EVENTS}?after_id=${foreign?.id}`, { headers: latest(own.adminKey) });

        expectError(get, {
          operationId: 'getAuditEvent',
          status: 404,
          type: 'not_found_error',
          message: `audit_event_id: no audit event with ID ${foreign?.id}`,
          version: LATEST_API_VERSION,
        });
        expectError(cursor, {
          operationId: 'listAuditEvents',
          status: 400,
          type: 'invalid_request_error',
          message: `after_id: no audit event with ID ${foreign?.id}`,
          version: LATEST_API_VERSION,
        });
      }
    });
  });
});
