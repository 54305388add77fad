import { expectError, expectMatchesSpec, startTestServer, type TestServer } from '@apikeys/server/testing';
import type { Store } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const STORE_METHODS = [
  'ping',
  'findCredential',
  'getApiKey',
  'listApiKeys',
  'updateApiKey',
  'countActiveAdminKeys',
] as const satisfies readonly (keyof Store)[];

describe('getHealth', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 1 } });
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('200 alive [every version]', () => {
    it('answers ok without an admin key or a version header, and never touches the database', async () => {
      const spies = STORE_METHODS.map((method) => vi.spyOn(server.store, method));

      const { response, body } = await server.request('/health');

      expectMatchesSpec('getHealth', response, body);
      expect(response.status).toBe(200);
      expect(body).toEqual({ status: 'ok' });
      for (const spy of spies) {
        expect(spy).not.toHaveBeenCalled();
      }
    });

    it('answers ok even while the database fails', async () => {
      vi.spyOn(server.store, 'ping').mockRejectedValue(new Error('the database is gone'));

      const { response } = await server.request('/health');

      expect(response.status).toBe(200);
    });

    it('is not rate limited, and carries no rate-limit headers', async () => {
      // The server allows one request a minute per admin key and one failed authentication per address.
      const responses = await Promise.all(Array.from({ length: 5 }, () => server.request('/health')));

      expect(responses.map(({ response }) => response.status)).toEqual([200, 200, 200, 200, 200]);
      expect(responses[0]?.response.headers.get('ratelimit-limit')).toBeNull();
    });

    it('logs no info line per request', async () => {
      const { response } = await server.request('/health');
      const requestId = response.headers.get('request-id');

      expect(server.logLines.filter((line) => requestId !== null && line.includes(requestId))).toEqual([]);
    });
  });

  describe('400 invalid_request_error [every version]', () => {
    it('refuses an unknown query parameter, naming it', async () => {
      const result = await server.request('/health?verbose=1');

      expectError(result, {
        status: 400,
        type: 'invalid_request_error',
        message: 'verbose: unknown query parameter',
        operationId: 'getHealth',
      });
    });
  });
});
