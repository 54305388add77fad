import { readFileSync } from 'node:fs';
import { API_VERSION, API_VERSIONS, LATEST_API_VERSION } from '@apikeys/api-types';
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
import { loadSpec, versionDocumentPath } from '@apikeys/spec';
import { nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('API versions: one key, as each version shows it', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let defaultWorkspaceId: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('versions');
    defaultWorkspaceId = (await server.store.getOrganization(org.id))?.defaultWorkspaceId ?? '';
  });
  afterAll(() => server.close());

  async function get(id: string, version: string, header = 'vendor-version') {
    const result = await server.request(apiKeyPath(id), { headers: { 'x-api-key': org.adminKey, [header]: version } });
    expectMatchesSpec('getApiKey', result.response, result.body, version as typeof API_VERSION);
    return result.body as Record<string, unknown>;
  }

  it('a key of the default workspace: workspace_id null in 2023-06-01, the real ID in the scope of 2026-10-21', async () => {
    const { apiKey } = await server.store.createApiKey({
      organizationId: org.id,
      name: 'default workspace',
      createdBy: { id: 'user_v', type: 'user' },
    });

    const old = await get(apiKey.id, API_VERSION);
    const latest = await get(apiKey.id, LATEST_API_VERSION);

    expect(Object.keys(old).sort()).toEqual(
      ['created_at', 'created_by', 'id', 'name', 'partial_key_hint', 'status', 'type', 'workspace_id'].sort(),
    );
    expect(old.workspace_id).toBeNull();
    expect(Object.keys(latest).sort()).toEqual(
      [
        'created_at',
        'created_by',
        'expires_at',
        'id',
        'last_used_at',
        'metadata',
        'name',
        'partial_key_hint',
        'permissions',
        'principal',
        'scope',
        'status',
        'type',
      ].sort(),
    );
    expect(latest.scope).toEqual({ type: 'workspace', workspace_id: defaultWorkspaceId });
    const { workspace_id: _w, ...shared } = old;
    expect(latest).toMatchObject(shared);
  });

  it('a key with organization scope and an expired key, as 2023-06-01 shows them', async () => {
    const { apiKey: scoped } = await server.store.createApiKey({
      organizationId: org.id,
      name: 'organization scope',
      createdBy: { id: 'user_v', type: 'user' },
      scope: 'organization',
      principal: { type: 'user', id: 'user_v' },
    });
    const { apiKey: expired } = await server.store.createApiKey({
      organizationId: org.id,
      name: 'expired',
      createdBy: { id: 'user_v', type: 'user' },
      expiresAt: nowMicros() - 1,
    });

    expect(await get(scoped.id, API_VERSION)).toMatchObject({ workspace_id: null, status: 'active' });
    expect(await get(scoped.id, LATEST_API_VERSION)).toMatchObject({
      scope: { type: 'organization' },
      principal: { type: 'user_actor', user_id: 'user_v' },
    });
    expect(await get(expired.id, API_VERSION)).toMatchObject({ status: 'inactive' });
    expect(await get(expired.id, LATEST_API_VERSION, 'anthropic-version')).toMatchObject({ status: 'expired' });
  });

  it("the workspace filter takes the default workspace's real ID in both versions, and never matches organization scope", async () => {
    const other = await server.createOrganization('filters');
    const { apiKey: inDefault } = await server.store.createApiKey({
      organizationId: other.id,
      name: 'default',
      createdBy: { id: 'user_v', type: 'user' },
    });
    await server.store.createApiKey({
      organizationId: other.id,
      name: 'scoped',
      createdBy: { id: 'user_v', type: 'user' },
      scope: 'organization',
      principal: { type: 'service_account', id: 'svcacct_v' },
    });
    await server.store.createApiKey({
      organizationId: other.id,
      name: 'elsewhere',
      createdBy: { id: 'user_v', type: 'user' },
      workspaceId: 'wrkspc_elsewhere',
    });
    const otherDefault = (await server.store.getOrganization(other.id))?.defaultWorkspaceId ?? '';

    for (const version of API_VERSIONS) {
      const result = await server.request(`${API_KEYS_PATH}?workspace_id=${otherDefault}`, {
        headers: authHeaders(other.adminKey, { 'vendor-version': version }),
      });
      expectMatchesSpec('listApiKeys', result.response, result.body, version);
      expect((result.body as { data: { id: string }[] }).data.map((key) => key.id)).toEqual([inDefault.id]);
    }
  });

  it.each(['status', 'workspace_id', 'created_by_user_id'])(
    'an empty %s filters nothing in 2026-10-21 (as the SDKs send null), and is refused in 2023-06-01',
    async (name) => {
      const list = (version: string, query: string) =>
        server.request(`${API_KEYS_PATH}?limit=1000${query}`, {
          headers: authHeaders(org.adminKey, { 'vendor-version': version }),
        });

      const empty = await list(LATEST_API_VERSION, `&${name}=`);
      expectMatchesSpec('listApiKeys', empty.response, empty.body, LATEST_API_VERSION);
      expect(empty.body).toEqual((await list(LATEST_API_VERSION, '')).body);

      expectError(await list(API_VERSION, `&${name}=`), {
        operationId: 'listApiKeys',
        status: 400,
        type: 'invalid_request_error',
        message: `${name}: must not be empty (query parameter)`,
      });
    },
  );

  it('an unknown version is refused with the supported ones', async () => {
    const result = await server.request(API_KEYS_PATH, {
      headers: authHeaders(org.adminKey, { 'vendor-version': '2024-01-01' }),
    });

    expectError(result, {
      operationId: undefined,
      status: 400,
      type: 'invalid_request_error',
      message: `vendor-version: unsupported version "2024-01-01"; supported versions: ${API_VERSIONS.join(', ')}`,
    });
  });
});

describe("each version's document", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it.each(API_VERSIONS)('%s is served as YAML, exactly as committed in spec/versions, and as JSON', async (version) => {
    const yaml = await fetch(`${server.baseUrl}/openapi/${version}.yaml`);
    const json = await fetch(`${server.baseUrl}/openapi/${version}.json`);

    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toBe(readFileSync(versionDocumentPath(version), 'utf8'));
    expect(await json.json()).toEqual(loadSpec(version));
  });

  it('/openapi.yaml and /openapi.json are the latest version', async () => {
    const yaml = await fetch(`${server.baseUrl}/openapi.yaml`);
    const json = await fetch(`${server.baseUrl}/openapi.json`);

    expect(await yaml.text()).toBe(readFileSync(versionDocumentPath(LATEST_API_VERSION), 'utf8'));
    expect(await json.json()).toEqual(loadSpec(LATEST_API_VERSION));
  });
});
