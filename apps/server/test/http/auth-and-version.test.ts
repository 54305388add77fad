import type { OperationId } from '@apikeys/api-types';
import {
  API_VERSION,
  DEFAULT_ORGANIZATION,
  expectError,
  expectMatchesSpec,
  snapshotKeys,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ORG = DEFAULT_ORGANIZATION.id;
const LIST = '/v1/organizations/api_keys';

/** The secrets a header case may send, created in beforeAll. */
interface Secrets {
  admin: string;
  disabledAdmin: string;
  regular: string;
  foreignRegular: string;
  foreignAdmin: string;
}

interface Operation {
  operationId: OperationId;
  method: string;
  path: (keyId: string) => string;
  body?: string;
}

const OPERATIONS: Operation[] = [
  { operationId: 'listApiKeys', method: 'GET', path: () => LIST },
  { operationId: 'getApiKey', method: 'GET', path: (id) => `${LIST}/${id}` },
  {
    operationId: 'updateApiKey',
    method: 'POST',
    path: (id) => `${LIST}/${id}`,
    // A valid change: a request refused for its headers must not apply it.
    body: JSON.stringify({ name: 'changed by a refused request', status: 'archived' }),
  },
];

interface HeaderCase {
  name: string;
  headers: (secrets: Secrets) => Record<string, string>;
  status: number;
  type: string;
  message: RegExp | string;
}

const SUPPORTED = 'supported versions: 2023-06-01';

const REFUSED: HeaderCase[] = [
  {
    name: 'no x-api-key',
    headers: () => ({ 'vendor-version': API_VERSION }),
    status: 401,
    type: 'authentication_error',
    message: 'x-api-key header is required',
  },
  {
    name: 'an empty x-api-key',
    headers: () => ({ 'x-api-key': '', 'vendor-version': API_VERSION }),
    status: 401,
    type: 'authentication_error',
    message: /x-api-key/,
  },
  {
    name: 'an unknown admin key',
    headers: () => ({ 'x-api-key': `sk-adm-${'A'.repeat(43)}`, 'vendor-version': API_VERSION }),
    status: 401,
    type: 'authentication_error',
    message: 'invalid x-api-key',
  },
  {
    name: 'a garbage x-api-key',
    headers: () => ({ 'x-api-key': 'Bearer hello', 'vendor-version': API_VERSION }),
    status: 401,
    type: 'authentication_error',
    message: 'invalid x-api-key',
  },
  {
    name: 'an admin key with one character changed',
    headers: (secrets) => ({
      'x-api-key': `${secrets.admin.slice(0, -1)}${secrets.admin.endsWith('A') ? 'B' : 'A'}`,
      'vendor-version': API_VERSION,
    }),
    status: 401,
    type: 'authentication_error',
    message: 'invalid x-api-key',
  },
  {
    name: 'a disabled admin key',
    headers: (secrets) => ({ 'x-api-key': secrets.disabledAdmin, 'vendor-version': API_VERSION }),
    status: 401,
    type: 'authentication_error',
    message: 'invalid x-api-key',
  },
  {
    name: "a regular API key's secret",
    headers: (secrets) => ({ 'x-api-key': secrets.regular, 'vendor-version': API_VERSION }),
    status: 403,
    type: 'permission_error',
    message: /admin key/,
  },
  {
    name: "another organization's regular API key secret",
    headers: (secrets) => ({ 'x-api-key': secrets.foreignRegular, 'vendor-version': API_VERSION }),
    status: 403,
    type: 'permission_error',
    message: /admin key/,
  },
  {
    name: 'no version header',
    headers: (secrets) => ({ 'x-api-key': secrets.admin }),
    status: 400,
    type: 'invalid_request_error',
    message: 'vendor-version: header is required',
  },
  {
    name: 'an empty vendor-version',
    headers: (secrets) => ({ 'x-api-key': secrets.admin, 'vendor-version': '' }),
    status: 400,
    type: 'invalid_request_error',
    message: /^vendor-version: /,
  },
  {
    name: 'an unknown vendor-version',
    headers: (secrets) => ({ 'x-api-key': secrets.admin, 'vendor-version': '2024-01-01' }),
    status: 400,
    type: 'invalid_request_error',
    message: new RegExp(`^vendor-version: .*"2024-01-01".*${SUPPORTED}`),
  },
  {
    name: 'a vendor-version with surrounding text',
    headers: (secrets) => ({ 'x-api-key': secrets.admin, 'vendor-version': '2023-06-01-beta' }),
    status: 400,
    type: 'invalid_request_error',
    // Not shaped like a date, so not repeated: the message says what was expected instead.
    message: /^vendor-version: unsupported value \(not a date like YYYY-MM-DD\); supported versions: /,
  },
  {
    name: 'the alias anthropic-version with an unsupported value',
    headers: (secrets) => ({ 'x-api-key': secrets.admin, 'anthropic-version': '1999-12-31' }),
    status: 400,
    type: 'invalid_request_error',
    message: new RegExp(`"1999-12-31".*${SUPPORTED}`),
  },
  {
    name: 'an unknown vendor-version with a supported alias (vendor-version wins)',
    headers: (secrets) => ({
      'x-api-key': secrets.admin,
      'vendor-version': '2020-02-02',
      'anthropic-version': API_VERSION,
    }),
    status: 400,
    type: 'invalid_request_error',
    message: new RegExp(`^vendor-version: .*"2020-02-02".*${SUPPORTED}`),
  },
];

const ACCEPTED: { name: string; headers: (secrets: Secrets) => Record<string, string> }[] = [
  { name: 'vendor-version', headers: (secrets) => ({ 'x-api-key': secrets.admin, 'vendor-version': API_VERSION }) },
  {
    name: 'the alias anthropic-version alone',
    headers: (secrets) => ({ 'x-api-key': secrets.admin, 'anthropic-version': API_VERSION }),
  },
  {
    name: 'a supported vendor-version with an unsupported alias (vendor-version wins)',
    headers: (secrets) => ({
      'x-api-key': secrets.admin,
      'vendor-version': API_VERSION,
      'anthropic-version': '1999-12-31',
    }),
  },
  {
    name: 'header names in mixed case',
    headers: (secrets) => ({ 'X-Api-Key': secrets.admin, 'Vendor-Version': API_VERSION }),
  },
];

describe('authentication and API version', () => {
  let server: TestServer;
  let secrets: Secrets;
  let keyId: string;
  let foreignOrganization: string;

  beforeAll(async () => {
    server = await startTestServer();
    const { store } = server;
    const disabled = await store.createAdminKey({ organizationId: ORG, name: 'disabled' });
    await store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');
    const regular = await store.createApiKey({
      organizationId: ORG,
      name: 'regular',
      workspaceId: 'wrkspc_auth',
      createdBy: { id: 'user_auth', type: 'user' },
    });
    foreignOrganization = (await store.createOrganization('foreign')).id;
    const foreignRegular = await store.createApiKey({
      organizationId: foreignOrganization,
      name: 'foreign regular',
      createdBy: { id: 'user_auth', type: 'user' },
    });
    const foreignAdmin = await store.createAdminKey({ organizationId: foreignOrganization, name: 'foreign admin' });
    keyId = regular.apiKey.id;
    secrets = {
      admin: server.adminKey,
      disabledAdmin: disabled.secret,
      regular: regular.secret,
      foreignRegular: foreignRegular.secret,
      foreignAdmin: foreignAdmin.secret,
    };
  });
  afterAll(() => server.close());

  describe.each(OPERATIONS)('$operationId', (operation) => {
    const send = (headers: Record<string, string>) =>
      server.request(operation.path(keyId), {
        method: operation.method,
        headers: operation.body ? { ...headers, 'content-type': 'application/json' } : headers,
        body: operation.body ?? null,
      });

    it.each(REFUSED)('refuses $name with $status $type and changes nothing', async (testCase) => {
      const before = await snapshotKeys(server.store, ORG);

      const result = await send(testCase.headers(secrets));

      expectError(result, { operationId: operation.operationId, ...testCase });
      expect(await snapshotKeys(server.store, ORG)).toEqual(before);
    });

    it.each(ACCEPTED)('accepts $name', async (testCase) => {
      const result = await send(testCase.headers(secrets));

      expect(result.response.status, result.text).toBe(200);
      expectMatchesSpec(operation.operationId, result.response, result.body);
    });
  });

  it('does not let a disabled admin key work again after it is refused', async () => {
    const first = await server.request(LIST, {
      headers: { 'x-api-key': secrets.disabledAdmin, 'vendor-version': API_VERSION },
    });
    const second = await server.request(LIST, {
      headers: { 'x-api-key': secrets.disabledAdmin, 'vendor-version': API_VERSION },
    });
    expect([first.response.status, second.response.status]).toEqual([401, 401]);
  });

  it("lets another organization's admin key act only on its own organization", async () => {
    const result = await server.request(`${LIST}/${keyId}`, {
      headers: { 'x-api-key': secrets.foreignAdmin, 'vendor-version': API_VERSION },
    });
    expectError(result, { operationId: 'getApiKey', status: 404, type: 'not_found_error', message: /^api_key_id: / });
  });

  it('requires the headers on unknown paths too, and never reveals a route to an anonymous caller', async () => {
    const anonymous = await server.request('/v1/organizations/unknown', { headers: { 'vendor-version': API_VERSION } });
    expectError(anonymous, {
      operationId: undefined,
      status: 401,
      type: 'authentication_error',
      message: 'x-api-key header is required',
    });
  });
});
