import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/harness.js';
import { expectMatchesSpec } from '../support/spec-validator.js';

describe('harness smoke', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('lists keys with a typed client and validates against the spec', async () => {
    await server.store.createApiKey({
      organizationId: 'org_default',
      name: 'a',
      createdBy: { id: 'user_1', type: 'user' },
    });
    const { data, response, error } = await server.client.GET('/v1/organizations/api_keys', {
      params: { query: { limit: 5 } },
    });
    expect(error).toBeUndefined();
    expectMatchesSpec('listApiKeys', response, data);
    expect(data?.data).toHaveLength(1);
    const missing = await server.client.GET('/v1/organizations/api_keys/{api_key_id}', {
      params: { path: { api_key_id: 'nope' } },
    });
    expectMatchesSpec('getApiKey', missing.response, missing.error);
    expect(missing.response.status).toBe(404);
  });
});
