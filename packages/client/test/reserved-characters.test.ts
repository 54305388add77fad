import { API_VERSION, LATEST_API_VERSION } from '@apikeys/api-types';
import { startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiVersion, createAdminClient } from '../src/index.js';
import { observedFetch } from './support/observed-fetch.js';

// The list filters whose values hold reserved characters, as the client sends them (openapi-fetch encodes a value
// with encodeURIComponent, which leaves `*`, `(`, `)`, `!` and `'` as they are), against the real server.

let server: TestServer;
let organization: TestOrganization;

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('reserved characters');
});

afterAll(async () => {
  await server?.close();
});

describe('apiKeys.list with a value holding reserved characters', () => {
  it('lists the keys whose permissions grant a wildcard, the `*` sent as it is', async () => {
    const { fetch, sent } = observedFetch();
    const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, fetch });
    const wildcard = await client.apiKeys.create({ name: 'wildcard', permissions: ['documents.*'] });
    const everything = await client.apiKeys.create({ name: 'everything', permissions: ['*'] });
    await client.apiKeys.create({ name: 'exact', permissions: ['documents.read'] });
    await client.apiKeys.create({ name: 'other', permissions: ['documentsx.*'] });

    const page = await client.apiKeys.list({ permission: 'documents.*' });

    expect(sent.at(-1)?.url.search).toBe('?permission=documents.*');
    expect(page.data.map((key) => key.id)).toEqual([everything.id, wildcard.id]);
  });

  it.each<ApiVersion>([API_VERSION, LATEST_API_VERSION])(
    'in %s, filters by a workspace ID and a creator holding them',
    async (version) => {
      const { fetch, sent } = observedFetch();
      const client = createAdminClient({
        baseUrl: server.baseUrl,
        apiKey: organization.adminKey,
        apiVersion: version,
        fetch,
      });
      const workspaceId = `wrkspc_team(${version})*!'`;
      const { apiKey } = await server.store.createApiKey({
        organizationId: organization.id,
        name: 'reserved',
        workspaceId,
        createdBy: { id: `alice+${version}@example.com`, type: 'user' },
      });

      const byWorkspace = await client.apiKeys.list({ workspace_id: workspaceId });
      const byCreator = await client.apiKeys.list({ created_by_user_id: `alice+${version}@example.com` });

      expect(sent.map(({ url }) => url.search)).toEqual([
        // The URL parser of fetch itself encodes `'` in a query; the rest goes as the client wrote it.
        `?workspace_id=wrkspc_team(${version})*!%27`,
        `?created_by_user_id=alice%2B${version}%40example.com`,
      ]);
      expect(byWorkspace.data.map((key) => key.id)).toEqual([apiKey.id]);
      expect(byCreator.data.map((key) => key.id)).toEqual([apiKey.id]);
    },
  );
});
