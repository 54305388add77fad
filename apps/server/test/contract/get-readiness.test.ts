import { expectError, expectMatchesSpec, startTestServer, type TestServer } from '@apikeys/server/testing';
import { DatabaseUnavailableError } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { READINESS_DEADLINE_MS } from '../../src/health/readiness.js';

describe('getReadiness', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { perMinute: 1, burst: 1, authFailuresPerMinute: 1 } });
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function ready() {
    const result = await server.request('/ready');
    expectMatchesSpec('getReadiness', result.response, result.body);
    return result;
  }

  describe('200 ready [every version]', () => {
    it('passes every check once started, with a database that answers, without credentials', async () => {
      const ping = vi.spyOn(server.store, 'ping');

      const { response, body } = await ready();

      expect(response.status).toBe(200);
      expect(body).toEqual({
        status: 'ready',
        checks: { startup: { status: 'pass' }, shutdown: { status: 'pass' }, store: { status: 'pass' } },
      });
      expect(ping).toHaveBeenCalledTimes(1);
    });

    it('is not rate limited, and probes that arrive together share one database query', async () => {
      let answer: () => void = () => {};
      const ping = vi
        .spyOn(server.store, 'ping')
        .mockImplementationOnce(() => new Promise<void>((resolve) => (answer = resolve)));

      const probes = Promise.all(Array.from({ length: 5 }, () => server.request('/ready')));
      await vi.waitFor(() => expect(ping).toHaveBeenCalled());
      answer();
      const responses = await probes;

      expect(responses.map(({ response }) => response.status)).toEqual([200, 200, 200, 200, 200]);
      expect(ping).toHaveBeenCalledTimes(1);
    });
  });

  describe('503 not ready [every version]', () => {
    it('fails the store check when the database is unavailable, naming only the reason', async () => {
      const unavailable = new DatabaseUnavailableError(
        'unreachable',
        'the database is unavailable (unreachable): connect ECONNREFUSED 10.1.2.3:5432 postgres://app:pw@db/keys',
      );
      vi.spyOn(server.store, 'ping').mockRejectedValueOnce(unavailable);

      const { response, body, text } = await ready();

      expect(response.status).toBe(503);
      expect(body).toEqual({
        status: 'not_ready',
        checks: {
          startup: { status: 'pass' },
          shutdown: { status: 'pass' },
          store: { status: 'fail', message: 'the database is unavailable (unreachable)' },
        },
      });
      expect(text).not.toMatch(/10\.1\.2\.3|postgres:|pw/);
    });

    it('fails the store check when the database does not answer within the deadline, and answers in time', async () => {
      vi.spyOn(server.store, 'ping').mockReturnValueOnce(new Promise<void>(() => {}));
      const started = performance.now();

      const { response, body } = await ready();

      const elapsed = performance.now() - started;
      expect(response.status).toBe(503);
      expect(body).toMatchObject({
        checks: {
          store: { status: 'fail', message: `the database did not answer within ${READINESS_DEADLINE_MS} ms` },
        },
      });
      expect(elapsed).toBeGreaterThanOrEqual(READINESS_DEADLINE_MS - 5);
      expect(elapsed).toBeLessThan(READINESS_DEADLINE_MS + 2000);
    });

    it('fails the store check with a generic message for an unexpected error', async () => {
      vi.spyOn(server.store, 'ping').mockRejectedValueOnce(new Error('SQLITE_CORRUPT at /var/lib/keys.db'));

      const { response, body, text } = await ready();

      expect(response.status).toBe(503);
      expect(body).toMatchObject({ checks: { store: { status: 'fail', message: 'the database check failed' } } });
      expect(text).not.toContain('/var/lib');
    });

    it('fails the shutdown check once the server is draining, while other requests are still served', async () => {
      server.readiness.markDraining();

      const { response, body } = await ready();
      const list = await server.client.GET('/v1/organizations/api_keys', {
        params: { header: { 'vendor-version': '2023-06-01' } },
      });

      expect(response.status).toBe(503);
      expect(body).toEqual({
        status: 'not_ready',
        checks: {
          startup: { status: 'pass' },
          shutdown: { status: 'fail', message: 'the server is shutting down' },
          store: { status: 'pass' },
        },
      });
      expect(list.response.status).toBe(200);
    });
  });

  describe('400 invalid_request_error [every version]', () => {
    it('refuses an unknown query parameter, naming it', async () => {
      const result = await server.request('/ready?full=1');

      expectError(result, {
        status: 400,
        type: 'invalid_request_error',
        message: 'full: unknown query parameter',
        operationId: 'getReadiness',
      });
    });
  });
});
