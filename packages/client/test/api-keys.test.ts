import type { ApiKey } from '@apikeys/api-types';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import {
  API_VERSION,
  createTestKey,
  nowMicros,
  startTestServer,
  type TestOrganization,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AdminClient,
  ApiKeyPage,
  type ApiVersion,
  createAdminClient,
  DEFAULT_API_VERSION,
  InvalidRequestError,
} from '../src/index.js';
import { observedFetch } from './support/observed-fetch.js';

let server: TestServer;
let organization: TestOrganization;
// The keys below are created in the store and serialized in the first version's shape (`toApiKeyJson`): the client
// that reads them speaks that version. The latest version has its own tests (lifecycle.test.ts).
let client: AdminClient<typeof API_VERSION>;
let keys: ApiKey[];

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('api keys');
  const created = [];
  for (const [index, status] of (['active', 'inactive', 'archived', 'active'] as const).entries()) {
    created.push(
      await createTestKey(server.store, organization.id, {
        name: `key ${index}`,
        workspaceId: index % 2 === 0 ? 'wrkspc_even' : null,
        createdBy: { id: `user_${index % 2}`, type: 'user' },
        status,
      }),
    );
  }
  keys = created.map(({ apiKey }) => toApiKeyJson(apiKey, nowMicros())).reverse();
  client = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, apiVersion: API_VERSION });
});

afterAll(async () => {
  await server?.close();
});

describe('apiKeys.list', () => {
  it('returns the first page, newest first, with the body fields and the page helpers', async () => {
    const page = await client.apiKeys.list();

    expect(page).toBeInstanceOf(ApiKeyPage);
    expect(page.toJSON()).toEqual({ data: keys, has_more: false, first_id: keys[0]?.id, last_id: keys[3]?.id });
    expect(page.hasMore).toBe(false);
    expect(page.requestId).toMatch(/^req_[A-Za-z0-9]{24}$/);
    expectTypeOf(page.data).toEqualTypeOf<ApiKey[]>();
  });

  it('sends limit and filters as query parameters', async () => {
    const page = await client.apiKeys.list({ limit: 1, status: 'active' });

    expect(page.data.map((key) => key.name)).toEqual(['key 3']);
    expect(page.hasMore).toBe(true);
    expect(page.query).toEqual({ limit: 1, status: 'active' });
  });

  it('combines filters with AND', async () => {
    const page = await client.apiKeys.list({ status: 'active', workspace_id: 'wrkspc_even' });

    expect(page.data.map((key) => key.name)).toEqual(['key 0']);
    expect(page.hasMore).toBe(false);
  });

  it('filters by creator', async () => {
    const page = await client.apiKeys.list({ created_by_user_id: 'user_1' });

    expect(page.data.map((key) => key.name)).toEqual(['key 3', 'key 1']);
  });

  it('returns an empty page for an organization without keys', async () => {
    const empty = await server.createOrganization('no keys');
    const page = await createAdminClient({ baseUrl: server.baseUrl, apiKey: empty.adminKey }).apiKeys.list();

    expect(page.toJSON()).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    await expect(page.nextPage()).resolves.toBeNull();
    await expect(page.previousPage()).resolves.toBeNull();
  });
});

describe('apiKeys.retrieve', () => {
  it('returns the key', async () => {
    const key = keys[1] as ApiKey;

    const retrieved = await client.apiKeys.retrieve(key.id);

    expect(retrieved).toEqual(key);
    expectTypeOf(retrieved).toEqualTypeOf<ApiKey>();
  });

  it('refuses an ID that URL parsing would resolve to another path, before sending anything', async () => {
    const { fetch, sent } = observedFetch();
    const observed = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, fetch });

    for (const id of ['', '.', '..']) {
      await expect(observed.apiKeys.retrieve(id)).rejects.toThrow(TypeError);
    }
    expect(sent).toHaveLength(0);
  });
});

describe('apiKeys.update', () => {
  it('renames a key and leaves its status as it was', async () => {
    const key = keys[2] as ApiKey;

    const updated = await client.apiKeys.update(key.id, { name: 'renamed' });

    expect(updated).toEqual({ ...key, name: 'renamed' });
    await expect(client.apiKeys.retrieve(key.id)).resolves.toEqual(updated);
  });

  it('changes the status, and treats a null status as unchanged', async () => {
    const key = keys[3] as ApiKey;

    const deactivated = await client.apiKeys.update(key.id, { status: 'inactive' });
    const unchanged = await client.apiKeys.update(key.id, { status: null });

    expect(deactivated.status).toBe('inactive');
    expect(unchanged).toEqual(deactivated);
  });

  it('returns the key unchanged for an empty body', async () => {
    const key = await client.apiKeys.retrieve(keys[0]?.id ?? '');

    await expect(client.apiKeys.update(key.id, {})).resolves.toEqual(key);
  });

  it('is typed from the spec: only name and status, with the spec values', () => {
    expectTypeOf(client.apiKeys.update).parameter(1).toEqualTypeOf<{
      name?: string;
      status?: 'active' | 'inactive' | 'archived' | null;
    }>();
    expectTypeOf(client.apiKeys.update).returns.resolves.toEqualTypeOf<ApiKey>();
  });
});

describe('headers', () => {
  it("sends x-api-key and vendor-version on every request, the default version being the spec's", async () => {
    const { fetch, sent } = observedFetch();
    const observed = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, fetch });
    const id = keys[0]?.id ?? '';

    await observed.apiKeys.list();
    await observed.apiKeys.retrieve(id);
    await observed.apiKeys.update(id, {});

    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET', 'POST']);
    for (const request of sent) {
      expect(request.headers.get('x-api-key')).toBe(organization.adminKey);
      expect(request.headers.get('vendor-version')).toBe(DEFAULT_API_VERSION);
    }
    expect(DEFAULT_API_VERSION).toBe(LATEST_API_VERSION);
    expect(sent[2]?.headers.get('content-type')).toBe('application/json');
  });

  it('sends the version it is given', async () => {
    const { fetch, sent } = observedFetch();
    const observed = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: organization.adminKey,
      version: API_VERSION,
      fetch,
    });
    // A version the API does not know (not one the spec lists): proves the option, not the default, is sent.
    const unknown = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: organization.adminKey,
      version: '1999-01-01' as ApiVersion,
      fetch,
    });

    await observed.apiKeys.list({ limit: 1 });
    await expect(unknown.apiKeys.list({ limit: 1 })).rejects.toThrow(InvalidRequestError);

    expect(sent.map((request) => request.headers.get('vendor-version'))).toEqual([API_VERSION, '1999-01-01']);
  });

  it('encodes the key ID in the path', async () => {
    const { fetch, sent } = observedFetch();
    const observed = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, fetch });

    await expect(observed.apiKeys.retrieve('a/b?c')).rejects.toMatchObject({ status: 404 });

    expect(sent[0]?.url.pathname).toBe('/v1/organizations/api_keys/a%2Fb%3Fc');
  });
});

describe('createAdminClient', () => {
  it('refuses missing or out-of-range options', () => {
    const base = { baseUrl: server.baseUrl, apiKey: organization.adminKey };

    expect(() => createAdminClient({ ...base, apiKey: '' })).toThrow(TypeError);
    expect(() => createAdminClient({ ...base, baseUrl: '' })).toThrow(TypeError);
    expect(() => createAdminClient({ ...base, maxRetries: -1 })).toThrow(RangeError);
    expect(() => createAdminClient({ ...base, maxRetries: 1.5 })).toThrow(RangeError);
    expect(() => createAdminClient({ ...base, timeoutMs: 0 })).toThrow(RangeError);
    expect(() => createAdminClient({ ...base, timeoutMs: 2 ** 31 })).toThrow(RangeError);
  });

  it.each(['sk-adm-secret\nInjected: 1', 'sk-adm-with space', 'sk-adm-é'])(
    'refuses an admin key that cannot be a header value, without repeating it (%j)',
    (apiKey) => {
      const base = { baseUrl: server.baseUrl, apiKey };
      expect(() => createAdminClient(base)).toThrow(TypeError);
      expect(() => createAdminClient(base)).not.toThrow(/sk-adm/);
    },
  );
});
