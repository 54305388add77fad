import { type ApiKey, LATEST_API_VERSION } from '@apikeys/api-types';
import { closedPort, startTestServer } from '@apikeys/server/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  ApiKeysError,
  ConnectionError,
  createAdminClient,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  TimeoutError,
} from '../src/index.js';
import { backoffDelay, MAX_RETRY_AFTER_MS, parseRetryAfter } from '../src/transport.js';
import { observedFetch } from './support/observed-fetch.js';
import { type Action, errorBody, type ScriptedServer, startScriptedServer } from './support/scripted-server.js';

const KEY: ApiKey = {
  id: 'apikey_000000000000000000000001',
  type: 'api_key',
  name: 'retried',
  workspace_id: null,
  created_at: '2024-10-30T23:58:27.427722Z',
  created_by: { id: 'user_1', type: 'user' },
  partial_key_hint: 'sk-api-Ab3d...wXyZ',
  status: 'active',
};

const OK: Action = { status: 200, body: KEY };
const unavailable = (headers: Record<string, string> = {}): Action => ({
  status: 503,
  headers,
  body: errorBody('api_error', 'unavailable'),
});
const rateLimited = (headers: Record<string, string> = {}): Action => ({
  status: 429,
  headers,
  body: errorBody('rate_limit_error', 'slow down'),
});

let scripted: ScriptedServer | undefined;

afterEach(async () => {
  await scripted?.close();
  scripted = undefined;
});

async function serve(script: Action[]): Promise<ScriptedServer> {
  scripted = await startScriptedServer(script);
  return scripted;
}

function clientOf(
  server: ScriptedServer,
  options: { maxRetries?: number; timeoutMs?: number; retryBaseDelayMs?: number } = {},
) {
  return createAdminClient({ baseUrl: server.baseUrl, apiKey: 'sk-adm-test', retryBaseDelayMs: 1, ...options });
}

/** Milliseconds between consecutive requests the server received. */
function gaps(server: ScriptedServer): number[] {
  return server.requests.slice(1).map((request, index) => request.at - (server.requests[index]?.at ?? 0));
}

describe('retries', () => {
  it('retries 429 and 503 until a success', async () => {
    const server = await serve([rateLimited(), unavailable(), OK]);

    await expect(clientOf(server).apiKeys.retrieve(KEY.id)).resolves.toEqual(KEY);

    expect(server.requests).toHaveLength(3);
  });

  it('retries 408 and other 5xx statuses', async () => {
    const server = await serve([{ status: 408, body: '' }, { status: 500, body: '' }, OK]);

    await expect(clientOf(server).apiKeys.retrieve(KEY.id)).resolves.toEqual(KEY);

    expect(server.requests).toHaveLength(3);
  });

  it('waits the retry-after the server asks for (1 s)', async () => {
    const server = await serve([rateLimited({ 'retry-after': '1' }), OK]);

    await clientOf(server).apiKeys.retrieve(KEY.id);

    expect(gaps(server)[0]).toBeGreaterThanOrEqual(950);
    expect(gaps(server)[0]).toBeLessThan(3000);
  });

  it('backs off exponentially without retry-after', async () => {
    const server = await serve([unavailable(), unavailable(), OK]);

    await clientOf(server, { retryBaseDelayMs: 100 }).apiKeys.retrieve(KEY.id);

    const [first = 0, second = 0] = gaps(server);
    expect(first).toBeGreaterThanOrEqual(70);
    expect(second).toBeGreaterThanOrEqual(145);
  });

  it('makes at most maxRetries retries (default 2), then throws the last error', async () => {
    const server = await serve([unavailable()]);

    const error = await clientOf(server)
      .apiKeys.list()
      .catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, message: 'unavailable' });
    expect(server.requests).toHaveLength(3);
  });

  it('honours maxRetries from the client and from the call', async () => {
    const server = await serve([rateLimited()]);
    const client = clientOf(server, { maxRetries: 4 });

    await expect(client.apiKeys.list()).rejects.toThrow(RateLimitError);
    expect(server.requests).toHaveLength(5);
    await expect(client.apiKeys.list({}, { maxRetries: 0 })).rejects.toThrow(RateLimitError);
    expect(server.requests).toHaveLength(6);
  });

  it('does not wait for a retry-after longer than a minute: it throws at once', async () => {
    const server = await serve([rateLimited({ 'retry-after': String(MAX_RETRY_AFTER_MS / 1000 + 1) }), OK]);

    await expect(clientOf(server).apiKeys.list()).rejects.toThrow(RateLimitError);

    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [400, 'invalid_request_error', InvalidRequestError],
    [404, 'not_found_error', NotFoundError],
  ] as const)('never retries %i', async (status, type, ErrorClass) => {
    const server = await serve([{ status, body: errorBody(type, 'no') }, OK]);

    await expect(clientOf(server).apiKeys.retrieve(KEY.id)).rejects.toThrow(ErrorClass);

    expect(server.requests).toHaveLength(1);
  });

  it('sends the same body again when it retries an update', async () => {
    const server = await serve([unavailable(), OK]);

    await clientOf(server).apiKeys.update(KEY.id, { name: 'renamed', status: 'inactive' });

    expect(server.requests.map((request) => [request.method, request.url, request.body])).toEqual([
      ['POST', `/v1/organizations/api_keys/${KEY.id}`, '{"name":"renamed","status":"inactive"}'],
      ['POST', `/v1/organizations/api_keys/${KEY.id}`, '{"name":"renamed","status":"inactive"}'],
    ]);
    expect(server.requests[1]?.headers['x-api-key']).toBe('sk-adm-test');
    expect(server.requests[1]?.headers['vendor-version']).toBe(LATEST_API_VERSION);
  });

  it('retries a dropped connection', async () => {
    const server = await serve([{ destroy: true }, OK]);

    await expect(clientOf(server).apiKeys.retrieve(KEY.id)).resolves.toEqual(KEY);

    expect(server.requests).toHaveLength(2);
  });
});

describe('creating and rotating keys, which are not idempotent', () => {
  const CREATED = { status: 200, body: { ...KEY, key: `sk-api-${'A'.repeat(49)}` } } as const;
  const ROTATE_PATH = `/v1/organizations/api_keys/${KEY.id}/rotate`;

  it.each([
    ['a 503', unavailable()],
    ['a 500', { status: 500, body: '' }],
    ['a 408', { status: 408, body: '' }],
  ] as const)('are not retried after %s, whose outcome is unknown', async (_case, action: Action) => {
    const server = await serve([action]);
    const client = clientOf(server);

    await expect(client.apiKeys.create({ name: 'once' })).rejects.toBeInstanceOf(ApiKeysError);
    await expect(client.apiKeys.rotate(KEY.id)).rejects.toBeInstanceOf(ApiKeysError);

    expect(server.requests.map((request) => [request.method, request.url])).toEqual([
      ['POST', '/v1/organizations/api_keys'],
      ['POST', ROTATE_PATH],
    ]);
  });

  it('are not retried after a dropped connection or a timeout', async () => {
    const dropped = await serve([{ destroy: true }, CREATED]);

    await expect(clientOf(dropped).apiKeys.create({ name: 'once' })).rejects.toThrow(ConnectionError);
    expect(dropped.requests).toHaveLength(1);
    await dropped.close();

    const hanging = await serve([{ hang: true }, CREATED]);
    await expect(clientOf(hanging, { timeoutMs: 100 }).apiKeys.rotate(KEY.id)).rejects.toThrow(TimeoutError);
    expect(hanging.requests).toHaveLength(1);
  });

  it('are retried after a 429, which changes nothing, sending the same body again', async () => {
    const server = await serve([rateLimited(), CREATED, rateLimited(), CREATED]);
    const client = clientOf(server);

    await expect(client.apiKeys.create({ name: 'after 429' })).resolves.toEqual(CREATED.body);
    await expect(client.apiKeys.rotate(KEY.id, { grace_period_seconds: 60 })).resolves.toEqual(CREATED.body);

    expect(server.requests.map((request) => [request.url, request.body])).toEqual([
      ['/v1/organizations/api_keys', '{"name":"after 429"}'],
      ['/v1/organizations/api_keys', '{"name":"after 429"}'],
      [ROTATE_PATH, '{"grace_period_seconds":60}'],
      [ROTATE_PATH, '{"grace_period_seconds":60}'],
    ]);
  });

  it('sends a rotation without a grace period with no body, and one with it as JSON', async () => {
    const server = await serve([CREATED]);
    const client = clientOf(server);

    await client.apiKeys.rotate(KEY.id);
    await client.apiKeys.rotate(KEY.id, { grace_period_seconds: 0 });

    expect(server.requests.map((request) => [request.body, request.headers['content-type']])).toEqual([
      ['', undefined],
      ['{"grace_period_seconds":0}', 'application/json'],
    ]);
  });
});

describe("the real server's 429", () => {
  it('is retried after the retry-after the server sends, and the retry succeeds', async () => {
    // One request at once, sixty a minute: the second request of a burst waits for the next second.
    const server = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
    try {
      const observed = observedFetch();
      const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: server.adminKey, fetch: observed.fetch });
      await client.apiKeys.list({ limit: 1 });

      const started = performance.now();
      const page = await client.apiKeys.list({ limit: 1 });
      const waitedMs = performance.now() - started;

      expect(page.data).toEqual([]);
      expect(observed.sent).toHaveLength(3);
      // The server asked for one second; the client waited that long before its retry, not its own backoff.
      expect(waitedMs).toBeGreaterThanOrEqual(950);
      expect(waitedMs).toBeLessThan(3000);
    } finally {
      await server.close();
    }
  });

  it('throws RateLimitError with the retry-after when retrying is off', async () => {
    const server = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
    try {
      const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: server.adminKey, maxRetries: 0 });
      await client.apiKeys.list({ limit: 1 });

      const error = await client.apiKeys.list({ limit: 1 }).catch((thrown: unknown) => thrown);

      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).headers?.get('retry-after')).toBe('1');
      expect((error as RateLimitError).message).toMatch(/^too many requests for this admin key; retry after 1 second$/);
    } finally {
      await server.close();
    }
  });
});

describe('connection errors and timeouts', () => {
  it('throws ConnectionError, with no status, after retrying a refused connection', async () => {
    const port = await closedPort();
    let attempts = 0;
    const client = createAdminClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'sk-adm-test',
      retryBaseDelayMs: 1,
      fetch: (request) => {
        attempts += 1;
        return fetch(request);
      },
    });

    const error = await client.apiKeys.list().catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toBeInstanceOf(ApiKeysError);
    expect(error).toMatchObject({ type: 'connection_error', status: undefined, requestId: undefined });
    expect((error as Error).message).toMatch(/^connection error: fetch failed/);
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(attempts).toBe(3);
  });

  it('throws TimeoutError when the server never answers, after retrying each attempt', async () => {
    const server = await serve([{ hang: true }]);
    const started = performance.now();

    const error = await clientOf(server, { timeoutMs: 200, maxRetries: 1 })
      .apiKeys.list()
      .catch((thrown: unknown) => thrown);

    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({
      type: 'timeout_error',
      status: undefined,
      message: 'request timed out after 200 ms',
    });
    expect(server.requests).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(5000);
  });

  it('takes a timeout per call', async () => {
    const server = await serve([{ hang: true }]);

    await expect(clientOf(server).apiKeys.list({}, { timeoutMs: 50, maxRetries: 0 })).rejects.toThrow(TimeoutError);

    expect(server.requests).toHaveLength(1);
  });

  it('times out even a fetch that ignores its abort signal', async () => {
    const client = createAdminClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'sk-adm-test',
      maxRetries: 0,
      timeoutMs: 50,
      fetch: () => new Promise<Response>(() => undefined),
    });

    await expect(client.apiKeys.list()).rejects.toThrow(TimeoutError);
  });

  it('stops at once, without retrying, when the caller aborts', async () => {
    const server = await serve([{ hang: true }]);
    const controller = new AbortController();
    const pending = clientOf(server).apiKeys.list({}, { signal: controller.signal });
    while (server.requests.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    controller.abort();

    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('retry delays', () => {
  it('reads retry-after as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');

    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0.5 ', now)).toBe(500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('doubles the backoff at each attempt, with up to 25 % jitter, up to the cap', () => {
    const settings = { fetch, maxRetries: 5, timeoutMs: 1000, retryBaseDelayMs: 100, retryMaxDelayMs: 350 };

    for (let i = 0; i < 50; i++) {
      const delays = [0, 1, 2, 3].map((attempt) => backoffDelay(attempt, settings));
      expect(delays[0]).toBeGreaterThanOrEqual(75);
      expect(delays[0]).toBeLessThanOrEqual(100);
      expect(delays[1]).toBeGreaterThanOrEqual(150);
      expect(delays[1]).toBeLessThanOrEqual(200);
      expect(delays[3]).toBeGreaterThanOrEqual(262.5);
      expect(delays[3]).toBeLessThanOrEqual(350);
    }
  });
});
