import {
  authHeaders,
  DEFAULT_ORGANIZATION,
  expectError,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/domain/errors.js';

describe('paths match the spec exactly', () => {
  let server: TestServer;
  let keyId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const { apiKey } = await server.store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'exact',
      createdBy: { id: 'user_1', type: 'user' },
    });
    keyId = apiKey.id;
  });
  afterAll(() => server.close());

  it.each([
    ['GET', () => '/v1/organizations/api_keys/'],
    ['GET', () => `/v1/organizations/api_keys/${keyId}/`],
    ['POST', () => `/v1/organizations/api_keys/${keyId}/`],
    ['GET', () => '/V1/organizations/api_keys'],
    ['GET', () => '/v1/organizations/API_KEYS'],
    ['GET', () => `/v1/Organizations/api_keys/${keyId}`],
  ])('%s %s is an unknown path: 404 not_found_error, and changes nothing', async (method, path) => {
    const before = await server.store.getApiKey(DEFAULT_ORGANIZATION.id, keyId);
    const result = await server.request(path(), {
      method,
      headers: authHeaders(server.adminKey, { 'content-type': 'application/json' }),
      ...(method === 'POST' && { body: JSON.stringify({ name: 'changed' }) }),
    });
    expectError(result, { operationId: undefined, status: 404, type: 'not_found_error', message: /^no route for / });
    expect(await server.store.getApiKey(DEFAULT_ORGANIZATION.id, keyId)).toEqual(before);
  });
});

describe('an error response the spec does not document', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('becomes the generic JSON 500, never an HTML page, and the log says why', async () => {
    // listApiKeys documents no 404: the response validator refuses this error body inside the error handler.
    vi.spyOn(server.store, 'listApiKeys').mockRejectedValueOnce(new AppError('not_found_error', 'undocumented'));

    const result = await server.request('/v1/organizations/api_keys', { headers: authHeaders(server.adminKey) });

    const body = expectError(result, {
      operationId: 'listApiKeys',
      status: 500,
      type: 'api_error',
      message: 'internal server error',
    });
    expect(result.text).not.toContain('undocumented');
    const logged = server.logLines.filter((line) => line.includes(body.request_id) && line.includes('"level":50'));
    expect(logged.join('\n')).toContain("no schema defined for status code '404'");
  });
});
