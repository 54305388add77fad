import type { Anthropic } from '@anthropic-ai/sdk';
import type { APIKeyListParams } from '@anthropic-ai/sdk/resources/beta/organization/api-keys';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWorkspaceOf, storeKey } from './support/keys.js';
import { collect, sdkClient } from './support/sdk.js';

const DAY_MICROS = 86_400_000_000;
const ALPHA = 'wrkspc_alpha';
const ALICE = { id: 'user_alice', type: 'user' } as const;
const BOB = { id: 'user_bob', type: 'user' } as const;

describe('SDK list filters: status, workspace_id, created_by_user_id', () => {
  let server: TestServer;
  let client: Anthropic;
  let defaultWorkspace: string;

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.createOrganization('sdk filters');
    defaultWorkspace = await defaultWorkspaceOf(server.store, org.id);
    const past = nowMicros() - DAY_MICROS;
    const future = nowMicros() + DAY_MICROS;
    const key = (name: string, fields: Parameters<typeof storeKey>[2]) =>
      storeKey(server.store, org.id, { name, ...fields });
    // Created oldest first; every list below is newest first.
    await key('active', { createdBy: ALICE, workspaceId: null });
    await key('expires later', { createdBy: BOB, workspaceId: ALPHA, expiresAt: future });
    await key('inactive', { createdBy: BOB, workspaceId: ALPHA, status: 'inactive' });
    await key('archived', { createdBy: ALICE, workspaceId: null, status: 'archived' });
    await key('expired', { createdBy: BOB, workspaceId: null, expiresAt: past });
    await key('archived, expired', { createdBy: ALICE, workspaceId: ALPHA, status: 'archived', expiresAt: past });
    // A service account whose ID is a user's: the created_by_user_id filter must not take it for that user.
    await key('organization scope', {
      createdBy: { id: ALICE.id, type: 'service_account' },
      scope: 'organization',
      principal: { type: 'user', id: 'user_carol' },
    });
    client = sdkClient(org.adminKey, server.baseUrl);
  });
  afterAll(() => server.close());

  /** The names of every key the filter returns, through auto-pagination one key per page. */
  async function names(filters: APIKeyListParams): Promise<string[]> {
    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 1, ...filters }));
    return keys.map((key) => key.name);
  }

  it.each([
    ['active', ['organization scope', 'expires later', 'active']],
    ['inactive', ['inactive']],
    ['archived', ['archived, expired', 'archived']],
    ['expired', ['expired']],
  ] as const)('status: %s returns exactly the keys with that status', async (status, expected) => {
    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 1, status }));

    expect(keys.map((key) => key.name)).toEqual(expected);
    expect(keys.every((key) => key.status === status)).toBe(true);
  });

  it("workspace_id: the default workspace's real ID (as scope.workspace_id shows it) returns its keys", async () => {
    const all = await collect(client.beta.organization.apiKeys.list());
    const shown = all.find((key) => key.name === 'active')?.scope;

    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 1, workspace_id: defaultWorkspace }));

    expect(shown).toEqual({ type: 'workspace', workspace_id: defaultWorkspace });
    expect(keys.map((key) => key.name)).toEqual(['expired', 'archived', 'active']);
    expect(keys.map((key) => key.scope)).toEqual(
      keys.map(() => ({ type: 'workspace', workspace_id: defaultWorkspace })),
    );
  });

  it('workspace_id: another workspace returns its keys; organization-scoped keys never match', async () => {
    expect(await names({ workspace_id: ALPHA })).toEqual(['archived, expired', 'inactive', 'expires later']);
    expect(await names({ workspace_id: 'wrkspc_unknown' })).toEqual([]);
  });

  it("created_by_user_id returns the user's keys, never a service account's with the same ID", async () => {
    expect(await names({ created_by_user_id: ALICE.id })).toEqual(['archived, expired', 'archived', 'active']);
    expect(await names({ created_by_user_id: BOB.id })).toEqual(['expired', 'inactive', 'expires later']);
  });

  it('filters combine with AND', async () => {
    expect(await names({ status: 'archived', workspace_id: ALPHA, created_by_user_id: ALICE.id })).toEqual([
      'archived, expired',
    ]);
    expect(await names({ status: 'active', workspace_id: defaultWorkspace })).toEqual(['active']);
    expect(await names({ status: 'expired', created_by_user_id: BOB.id })).toEqual(['expired']);
  });

  // The SDK's types accept null for each filter, and it sends null as an empty value (`?status=`): from 2026-10-21
  // the server takes an empty filter as no filter (spec: Input).
  it.each(['status', 'workspace_id', 'created_by_user_id'] as const)(
    '%s: null goes out as an empty value and filters nothing',
    async (name) => {
      expect(await names({ [name]: null })).toEqual(await names({}));
    },
  );
});
