import { type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  API_VERSION,
  expectMatchesSpec,
  parseRawResponse,
  sendRaw,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The filters whose legitimate values hold RFC 3986 reserved characters take them percent-encoded and as they are
// (a URL encoder leaves `*`, `!`, `'`, `(` and `)` as they are: encodeURIComponent does).
describe('reserved characters in query values, sent as they are and percent-encoded', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('reserved characters');
    const create = async (name: string, permissions: string[]) => {
      const { data } = await server
        .versionClient(LATEST_API_VERSION, org.adminKey)
        .POST('/v1/organizations/api_keys', { body: { name, permissions } });
      ids[name] = data?.id ?? '';
    };
    await create('exact', ['documents.read']);
    await create('wildcard', ['documents.*']);
    await create('everything', ['*']);
    await create('other', ['documentsx.*']);
    for (const [name, workspaceId, userId] of [
      ['reserved', "wrkspc_team(a)*!'", 'alice@example.com'],
      ['plain', 'wrkspc_team', 'alice'],
    ] as const) {
      const created = await server.store.createApiKey({
        organizationId: org.id,
        name,
        workspaceId,
        createdBy: { id: userId, type: 'user' },
      });
      ids[name] = created.apiKey.id;
    }
  });
  afterAll(() => server.close());

  /** A key list's answer to a query sent byte for byte as written, as `curl` sends it: no URL encoder in between. */
  async function rawList(query: string, version: ApiVersion = LATEST_API_VERSION) {
    const request = [
      `GET ${API_KEYS_PATH}?${query} HTTP/1.1`,
      'host: 127.0.0.1',
      `x-api-key: ${org.adminKey}`,
      `vendor-version: ${version}`,
      'connection: close',
    ];
    const response = parseRawResponse(await sendRaw(server.baseUrl, `${request.join('\r\n')}\r\n\r\n`));
    return { ...response, json: JSON.parse(response.body) as unknown };
  }

  /** The IDs a raw list answered, once its answer is checked to be a page of the spec. */
  const listed = (result: Awaited<ReturnType<typeof rawList>>, version: ApiVersion = LATEST_API_VERSION) => {
    expect(result.status, result.body).toBe(200);
    expectMatchesSpec('listApiKeys', result, result.json, version);
    return (result.json as { data: { id: string }[] }).data.map((key) => key.id);
  };

  it.each([
    ['sent as it is', 'permission=documents.*'],
    ['percent-encoded', 'permission=documents.%2A'],
    ['percent-encoded in lower case', 'permission=documents.%2a'],
  ])('lists the keys whose permissions grant a wildcard %s: those holding it or a wider one', async (_, query) => {
    expect(listed(await rawList(query))).toEqual([ids.everything, ids.wildcard]);
  });

  it.each([
    ['sent as it is', 'permission=*'],
    ['percent-encoded', 'permission=%2A'],
  ])('lists the keys holding `*` for the filter `*` %s', async (_, query) => {
    expect(listed(await rawList(query))).toEqual([ids.everything]);
  });

  describe.each<ApiVersion>([API_VERSION, LATEST_API_VERSION])('in %s', (version) => {
    it.each([
      ['sent as they are', "workspace_id=wrkspc_team(a)*!'"],
      ['percent-encoded', 'workspace_id=wrkspc_team%28a%29%2A%21%27'],
    ])('filters by a workspace ID holding reserved characters %s', async (_, query) => {
      expect(listed(await rawList(query, version), version)).toEqual([ids.reserved]);
    });

    it.each([
      ['sent as it is', 'created_by_user_id=alice@example.com'],
      ['percent-encoded', 'created_by_user_id=alice%40example.com'],
    ])('filters by a user ID holding `@` %s', async (_, query) => {
      expect(listed(await rawList(query, version), version)).toEqual([ids.reserved]);
    });
  });

  it('still refuses a reserved character sent as it is where no legitimate value holds one (a cursor)', async () => {
    const result = await rawList(`after_id=${ids.plain}*`);

    expect(result.status, result.body).toBe(400);
    expectMatchesSpec('listApiKeys', result, result.json, LATEST_API_VERSION);
    expect(result.json).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringMatching(/^after_id: /) },
    });
  });
});
