import { API_KEYS_PATH, authHeaders, expectError, startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

/** Secrets carry a checksum: a mistyped admin key is refused before any database lookup. */
describe('the form of a presented admin key', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const flipLast = (secret: string) => `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;

  it.each([
    ['a mistyped checksum', () => flipLast(server.adminKey)],
    [
      'a mistyped random character',
      () => server.adminKey.replace(/^(sk-adm-)(.)/, (_, p, c) => p + (c === 'A' ? 'B' : 'A')),
    ],
    ['no form this service issues', () => `${server.adminKey}extra`],
  ])('refuses %s with 401 and never asks the database', async (_name, secret) => {
    const lookup = vi.spyOn(server.store, 'findCredential');

    const result = await server.request(API_KEYS_PATH, { headers: authHeaders(secret()) });

    expectError(result, {
      operationId: 'listApiKeys',
      status: 401,
      type: 'authentication_error',
      message: 'invalid x-api-key',
    });
    expect(lookup).not.toHaveBeenCalled();
  });

  it('looks up a secret of the form issued before the checksum existed, so that such keys keep working', async () => {
    const lookup = vi.spyOn(server.store, 'findCredential');

    const result = await server.request(API_KEYS_PATH, { headers: authHeaders(`sk-adm-${'A'.repeat(43)}`) });

    expect(result.response.status).toBe(401);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('accepts an issued admin key, whose checksum holds', async () => {
    const result = await server.request(API_KEYS_PATH, { headers: authHeaders(server.adminKey) });

    expect(result.response.status).toBe(200);
  });
});
