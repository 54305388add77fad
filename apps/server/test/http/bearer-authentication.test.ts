import {
  API_KEYS_PATH,
  API_VERSION,
  apiKeyPath,
  createTestKey,
  createTestOrganization,
  DEFAULT_ORGANIZATION,
  expectError,
  expectMatchesSpec,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ORG = DEFAULT_ORGANIZATION.id;
const VERSION = { 'vendor-version': API_VERSION };

/** `Authorization: Bearer <admin key>` as the official SDKs send it, in place of or beside `x-api-key`. */
describe('an admin key sent as Authorization: Bearer', () => {
  let server: TestServer;
  let otherAdminKey: string;
  let regularSecret: string;
  let keyId: string;

  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { perMinute: 0, burst: 1, authFailuresPerMinute: 1000 } });
    otherAdminKey = (await createTestOrganization(server.store, 'other')).adminKey;
    const created = await createTestKey(server.store, ORG, { name: 'bearer test' });
    regularSecret = created.secret;
    keyId = created.apiKey.id;
  });
  afterAll(() => server.close());

  const list = (headers: Record<string, string>) =>
    server.request(API_KEYS_PATH, { headers: { ...VERSION, ...headers } });

  it.each([
    ['Bearer', (key: string) => `Bearer ${key}`],
    ['lower-case bearer', (key: string) => `bearer ${key}`],
    ['BEARER and two spaces', (key: string) => `BEARER  ${key}`],
  ])('authenticates it alone (%s), in every operation', async (_name, authorization) => {
    const headers = { ...VERSION, authorization: authorization(server.adminKey) };

    const listed = await server.request(API_KEYS_PATH, { headers });
    const got = await server.request(apiKeyPath(keyId), { headers });
    const updated = await server.request(apiKeyPath(keyId), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'renamed through a bearer token' }),
    });

    expectMatchesSpec('listApiKeys', listed.response, listed.body);
    expect([listed.response.status, got.response.status, updated.response.status]).toEqual([200, 200, 200]);
    expect((updated.body as { name: string }).name).toBe('renamed through a bearer token');
  });

  it("acts on the bearer key's organization", async () => {
    const { response, body } = await list({ authorization: `Bearer ${otherAdminKey}` });

    expect(response.status).toBe(200);
    expect((body as { data: { id: string }[] }).data.map(({ id }) => id)).not.toContain(keyId);
  });

  it('uses x-api-key when both headers are sent, whatever Authorization holds', async () => {
    const differing = await list({ 'x-api-key': server.adminKey, authorization: `Bearer ${otherAdminKey}` });
    const invalidBearer = await list({ 'x-api-key': server.adminKey, authorization: 'Bearer sk-adm-unknown' });
    const invalidApiKey = await list({ 'x-api-key': 'sk-adm-unknown', authorization: `Bearer ${server.adminKey}` });

    expect((differing.body as { data: { id: string }[] }).data.map(({ id }) => id)).toContain(keyId);
    expect(invalidBearer.response.status).toBe(200);
    expectError(invalidApiKey, {
      operationId: 'listApiKeys',
      status: 401,
      type: 'authentication_error',
      message: 'invalid x-api-key',
    });
  });

  it('ignores an Authorization of another scheme beside a valid x-api-key', async () => {
    const { response } = await list({ 'x-api-key': server.adminKey, authorization: 'Basic dXNlcjpwYXNz' });

    expect(response.status).toBe(200);
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a scheme with no key', 'Bearer'],
    ['a key with no scheme', 'sk-adm-AAAA'],
  ])('refuses an Authorization of %s as the only credential with 401', async (_name, authorization) => {
    const result = await list({ authorization });

    expectError(result, {
      operationId: 'listApiKeys',
      status: 401,
      type: 'authentication_error',
      message: 'authorization: only the Bearer scheme is accepted (Authorization: Bearer <admin key>)',
    });
  });

  it('refuses an unknown bearer key with 401 naming the header, and a regular API key with 403', async () => {
    const unknown = await list({ authorization: `Bearer sk-adm-${'A'.repeat(43)}` });
    const regular = await list({ authorization: `Bearer ${regularSecret}` });

    expectError(unknown, {
      operationId: 'listApiKeys',
      status: 401,
      type: 'authentication_error',
      message: 'invalid authorization',
    });
    expectError(regular, {
      operationId: 'listApiKeys',
      status: 403,
      type: 'permission_error',
      message: 'this API requires an admin key; authorization holds a regular API key',
    });
  });

  it('never echoes a bearer secret in a response or a log line', async () => {
    const secrets = [server.adminKey, otherAdminKey, regularSecret];
    const results = await Promise.all([
      list({ authorization: `Bearer ${regularSecret}` }),
      list({ 'x-api-key': 'sk-adm-unknown', authorization: `Bearer ${otherAdminKey}` }),
      list({ authorization: `Basic ${server.adminKey}` }),
    ]);

    for (const { text } of results) {
      for (const secret of secrets) {
        expect(text).not.toContain(secret);
      }
    }
    for (const line of server.logLines) {
      for (const secret of secrets) {
        expect(line).not.toContain(secret);
      }
    }
  });
});
