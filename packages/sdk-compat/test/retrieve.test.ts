import type Anthropic from '@anthropic-ai/sdk';
import type { BetaAPIKey } from '@anthropic-ai/sdk/resources/beta/organization/api-keys';
import { expectMatchesSpec, startTestServer, type TestServer } from '@apikeys/server/testing';
import { type ApiKeyRecord, nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWorkspaceOf, storeKey, timestampMicros } from './support/keys.js';
import { SDK_API_VERSION, sdkClient } from './support/sdk.js';

const DAY_MICROS = 86_400_000_000;

describe('SDK retrieve (client.beta.organization.apiKeys.retrieve)', () => {
  let server: TestServer;
  let client: Anthropic;
  let organizationId: string;
  let defaultWorkspace: string;

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.createOrganization('sdk retrieve');
    organizationId = org.id;
    defaultWorkspace = await defaultWorkspaceOf(server.store, org.id);
    client = sdkClient(org.adminKey, server.baseUrl);
  });
  afterAll(() => server.close());

  /** Retrieves a key through the SDK, checking the response against the spec of the version the SDK sent. */
  async function retrieve(id: string): Promise<BetaAPIKey> {
    const { data, response, request_id } = await client.beta.organization.apiKeys.retrieve(id).withResponse();
    expectMatchesSpec('getApiKey', response, data, SDK_API_VERSION);
    expect(request_id).toBe(response.headers.get('request-id'));
    return data;
  }

  /** The fields every key shows as the store holds them; the timestamps are compared to the microsecond. */
  function expectStoredFields(key: BetaAPIKey, stored: ApiKeyRecord): void {
    expect(key).toMatchObject({
      id: stored.id,
      type: 'api_key',
      name: stored.name,
      created_by: stored.createdBy,
      partial_key_hint: stored.partialKeyHint,
    });
    expect(timestampMicros(key.created_at)).toBe(stored.createdAt);
    expect(key.expires_at === null ? null : timestampMicros(key.expires_at)).toBe(stored.expiresAt ?? null);
  }

  it('a key of the default workspace: scope with the real workspace ID, no principal, no expiry', async () => {
    const stored = await storeKey(server.store, organizationId, { name: 'plain', workspaceId: null });

    const key = await retrieve(stored.id);

    expectStoredFields(key, stored);
    expect(key).toMatchObject({
      scope: { type: 'workspace', workspace_id: defaultWorkspace },
      principal: null,
      expires_at: null,
      status: 'active',
      created_by: { id: 'user_sdk', type: 'user' },
    });
  });

  it('an organization-scoped key bound to a user, expiring later, created by a service account', async () => {
    const stored = await storeKey(server.store, organizationId, {
      name: 'bound to a user',
      scope: 'organization',
      principal: { type: 'user', id: 'user_carol' },
      createdBy: { id: 'sa_deployer', type: 'service_account' },
      expiresAt: nowMicros() + DAY_MICROS,
    });

    const key = await retrieve(stored.id);

    expectStoredFields(key, stored);
    expect(key).toMatchObject({
      scope: { type: 'organization' },
      principal: { type: 'user_actor', user_id: 'user_carol' },
      created_by: { id: 'sa_deployer', type: 'service_account' },
      status: 'active',
    });
    expect(key.expires_at).not.toBeNull();
  });

  it('an expired key of a workspace, bound to a service account: status expired, expires_at in the past', async () => {
    const stored = await storeKey(server.store, organizationId, {
      name: 'expired',
      workspaceId: 'wrkspc_beta',
      principal: { type: 'service_account', id: 'sa_batch' },
      status: 'inactive',
      expiresAt: nowMicros() - DAY_MICROS,
    });

    const key = await retrieve(stored.id);

    expectStoredFields(key, stored);
    expect(key).toMatchObject({
      scope: { type: 'workspace', workspace_id: 'wrkspc_beta' },
      principal: { type: 'service_account_actor', service_account_id: 'sa_batch' },
      status: 'expired',
    });
  });

  it.each(['inactive', 'archived'] as const)('a %s key shows its stored status', async (status) => {
    const stored = await storeKey(server.store, organizationId, { name: status, status });

    const key = await retrieve(stored.id);

    expectStoredFields(key, stored);
    expect(key.status).toBe(status);
  });

  it('the typed fields narrow as the SDK declares them', async () => {
    const stored = await storeKey(server.store, organizationId, {
      name: 'typed',
      workspaceId: 'wrkspc_typed',
      principal: { type: 'user', id: 'user_dave' },
    });

    const key = await retrieve(stored.id);

    const workspace = key.scope.type === 'workspace' ? key.scope.workspace_id : undefined;
    const user = key.principal?.type === 'user_actor' ? key.principal.user_id : undefined;
    expect([workspace, user, key.created_by?.type]).toEqual(['wrkspc_typed', 'user_dave', 'user']);
  });
});
