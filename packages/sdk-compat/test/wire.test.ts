import { type Anthropic, APIError } from '@anthropic-ai/sdk';
import { API_VERSIONS } from '@apikeys/api-types';
import { API_KEYS_PATH, expectMatchesSpec, startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storeKey } from './support/keys.js';
import { type RecordedRequest, type RecordingProxy, startRecordingProxy } from './support/recording-proxy.js';
import { collect, SDK_API_VERSION, sdkClient } from './support/sdk.js';

/** A request's path and its query parameters, in the order sent. */
function target(request: RecordedRequest): { path: string; query: [string, string][] } {
  const url = new URL(request.url, 'http://proxy');
  return { path: url.pathname, query: [...url.searchParams] };
}

/**
 * What the unmodified SDK sends on the wire, seen through a recording pass-through proxy: the SDK is pointed at the
 * proxy's URL instead of the server's, and is otherwise constructed the same way.
 */
describe('SDK requests on the wire', () => {
  let server: TestServer;
  let proxy: RecordingProxy;
  let client: Anthropic;
  let adminKey: string;
  /** The organization's keys, newest first. */
  let newestFirst: string[];

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.createOrganization('sdk wire');
    adminKey = org.adminKey;
    const created = [];
    for (let index = 0; index < 5; index += 1) {
      created.push(await storeKey(server.store, org.id, { name: `wire ${index}` }));
    }
    newestFirst = created.sort((a, b) => b.createdAt - a.createdAt).map((key) => key.id);
    proxy = await startRecordingProxy(server.baseUrl);
    client = sdkClient(adminKey, proxy.url);
  });
  beforeEach(() => {
    proxy.requests.length = 0;
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('authenticates with Authorization: Bearer and selects the version with anthropic-version alone', async () => {
    const { data: page, response } = await client.beta.organization.apiKeys.list({ limit: 2 }).withResponse();

    const [request] = proxy.requests;
    expect(proxy.requests).toHaveLength(1);
    expect(request?.headers.authorization).toBe(`Bearer ${adminKey}`);
    expect(request?.headers['anthropic-version']).toBe(SDK_API_VERSION);
    expect(request?.headers['x-api-key']).toBeUndefined();
    expect(request?.headers['vendor-version']).toBeUndefined();
    expect(API_VERSIONS).toContain(SDK_API_VERSION);
    // The answer is the 2026-10-21 shape (scope, principal, expires_at; no workspace_id): the alias chose the version.
    const body = { data: page.data, has_more: page.has_more, first_id: page.first_id, last_id: page.last_id };
    expectMatchesSpec('listApiKeys', response, body, SDK_API_VERSION);
    expect(page.data[0]).toHaveProperty('scope');
    expect(page.data[0]).not.toHaveProperty('workspace_id');
  });

  it('sends the same credentials and version on retrieve and update, with a JSON body', async () => {
    const id = newestFirst[0] ?? '';

    await client.beta.organization.apiKeys.retrieve(id);
    await client.beta.organization.apiKeys.update(id, { name: 'renamed on the wire', status: null });

    const [retrieve, update] = proxy.requests;
    expect([retrieve?.method, update?.method]).toEqual(['GET', 'POST']);
    expect([retrieve, update].map((request) => request && target(request).path)).toEqual([
      `${API_KEYS_PATH}/${id}`,
      `${API_KEYS_PATH}/${id}`,
    ]);
    for (const request of [retrieve, update]) {
      expect(request?.headers.authorization).toBe(`Bearer ${adminKey}`);
      expect(request?.headers['anthropic-version']).toBe(SDK_API_VERSION);
    }
    expect(update?.headers['content-type']).toMatch(/^application\/json/);
  });

  it('auto-pagination forwards: limit, then after_id = the last_id of each page', async () => {
    await collect(client.beta.organization.apiKeys.list({ limit: 2 }));

    expect(proxy.requests.map((request) => target(request).query)).toEqual([
      [['limit', '2']],
      [
        ['limit', '2'],
        ['after_id', newestFirst[1]],
      ],
      [
        ['limit', '2'],
        ['after_id', newestFirst[3]],
      ],
    ]);
  });

  it('auto-pagination backwards: before_id, then before_id = the first_id of each page', async () => {
    await collect(client.beta.organization.apiKeys.list({ limit: 2, before_id: newestFirst[4] }));

    expect(proxy.requests.map((request) => target(request).query)).toEqual([
      [
        ['limit', '2'],
        ['before_id', newestFirst[4]],
      ],
      [
        ['limit', '2'],
        ['before_id', newestFirst[2]],
      ],
    ]);
  });

  it.each([
    ['400', () => client.beta.organization.apiKeys.list({ limit: 0 })],
    ['401', () => sdkClient('sk-adm-not-a-real-key', proxy.url).beta.organization.apiKeys.list()],
    ['404', () => client.beta.organization.apiKeys.retrieve(`apikey_${'0'.repeat(24)}`)],
  ])('a %s is not retried: the SDK sends exactly one request', async (status, call) => {
    const error = await call().then(
      () => undefined,
      (reason: unknown) => reason,
    );

    expect(error).toBeInstanceOf(APIError);
    expect(String((error as APIError).status)).toBe(status);
    expect(proxy.requests).toHaveLength(1);
    expect(proxy.requests[0]?.headers['x-stainless-retry-count']).toBe('0');
  });
});
