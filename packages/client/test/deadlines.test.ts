import { readFileSync } from 'node:fs';
import { closedPort } from '@apikeys/server/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  createAdminClient,
  createVerifierClient,
  ServiceUnavailableError,
  TimeoutError,
  VERIFIER_DEFAULTS,
  type VerifierClient,
} from '../src/index.js';
import { failure } from './support/failure.js';
import { type Action, errorBody, type ScriptedServer, startScriptedServer } from './support/scripted-server.js';

// `deadlineMs`: the time a whole call may take, every attempt and wait included; and the defaults of a verifier
// client, which bound a verification the key server cannot answer (it never answers, refuses connections, or asks
// for a wait) to `VERIFIER_DEFAULTS.deadlineMs`, as a gateway's request waits on it.

/** A busy machine's late timers, on top of a deadline. */
const SLACK_MS = 1_000;
const SECRET = `sk-api-${'D'.repeat(43)}`;
const VERDICT = { valid: false, code: 'NOT_FOUND', key: null };

const unavailable = (retryAfter: string): Action => ({
  status: 503,
  headers: { 'retry-after': retryAfter },
  body: errorBody('service_unavailable_error', 'the database is unavailable'),
});

let scripted: ScriptedServer | undefined;
let verifier: VerifierClient | undefined;

afterEach(async () => {
  await verifier?.close();
  verifier = undefined;
  await scripted?.close();
  scripted = undefined;
});

async function serve(script: Action[]): Promise<ScriptedServer> {
  scripted = await startScriptedServer(script);
  return scripted;
}

/** What `promise` rejected with, and how long it took to settle. */
async function timedFailure(promise: Promise<unknown>): Promise<{ error: unknown; tookMs: number }> {
  const started = performance.now();
  const error = await failure(promise);
  return { error, tookMs: performance.now() - started };
}

describe('deadlineMs', () => {
  const adminOf = (server: ScriptedServer, options: { deadlineMs?: number; retryBaseDelayMs?: number } = {}) =>
    createAdminClient({ baseUrl: server.baseUrl, apiKey: 'sk-adm-test', retryBaseDelayMs: 1, ...options });

  it('ends a call the server never answers at its deadline, cutting the last attempt short', async () => {
    const server = await serve([{ hang: true }]);
    const client = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: 'sk-adm-test',
      maxRetries: 5,
      timeoutMs: 400,
      deadlineMs: 600,
      retryBaseDelayMs: 1,
    });

    const { error, tookMs } = await timedFailure(client.apiKeys.list());

    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ message: 'no complete response within the deadline of 600 ms' });
    expect(server.requests).toHaveLength(2);
    expect(tookMs).toBeLessThan(600 + SLACK_MS);
  });

  it('does not wait for a retry-after that would pass the deadline: the error comes at once', async () => {
    const server = await serve([unavailable('2'), { status: 200, body: { data: [] } }]);

    const error = await failure(adminOf(server, { deadlineMs: 1_000 }).apiKeys.list());

    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(server.requests).toHaveLength(1);
  });

  it('makes no retry whose backoff would pass the deadline', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    let attempts = 0;
    const client = createAdminClient({
      baseUrl,
      apiKey: 'sk-adm-test',
      retryBaseDelayMs: 1_000,
      deadlineMs: 500,
      fetch: (request) => {
        attempts += 1;
        return fetch(request);
      },
    });

    await expect(client.apiKeys.list()).rejects.toThrow(ConnectionError);

    expect(attempts).toBe(1);
  });

  it('still retries while there is time before the deadline', async () => {
    const server = await serve([{ status: 500, body: '' }, { hang: true }]);

    const error = await failure(adminOf(server, { deadlineMs: 300 }).apiKeys.list());

    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(2);
  });

  it('takes a deadline per call', async () => {
    const server = await serve([{ hang: true }]);

    const { error, tookMs } = await timedFailure(adminOf(server).apiKeys.list({}, { deadlineMs: 100 }));

    expect(error).toMatchObject({ message: 'no complete response within the deadline of 100 ms' });
    expect(tookMs).toBeLessThan(100 + SLACK_MS);
  });

  it('is refused when it is not a number of milliseconds from 1', () => {
    const base = { baseUrl: 'http://127.0.0.1:1', apiKey: 'sk-adm-test' };

    expect(() => createAdminClient({ ...base, deadlineMs: 0 })).toThrow(RangeError);
    expect(() => createAdminClient({ ...base, deadlineMs: 2 ** 31 })).toThrow(RangeError);
    expect(() => createAdminClient({ ...base, deadlineMs: Number.NaN })).toThrow(/deadlineMs must be a number/);
  });
});

describe("a verifier client's defaults", () => {
  const verifierOf = (server: ScriptedServer, cache: boolean) => {
    verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', cache });
    return verifier;
  };
  const verifications = (server: ScriptedServer) =>
    server.requests.filter((request) => request.url === '/v1/keys/verify');

  it.each([
    ['without a cache', false],
    ['with a cache', true],
  ])('end a verification the server never answers within deadlineMs, after a retry (%s)', async (_, cache) => {
    const server = await serve([{ hang: true }]);

    const { error, tookMs } = await timedFailure(verifierOf(server, cache).keys.verify(SECRET));

    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({
      message: `no complete response within the deadline of ${VERIFIER_DEFAULTS.deadlineMs} ms`,
    });
    expect(verifications(server)).toHaveLength(2);
    expect(tookMs).toBeLessThan(VERIFIER_DEFAULTS.deadlineMs + SLACK_MS);
  });

  it("end a verification at once when the server's retry-after would pass the deadline", async () => {
    const server = await serve([
      unavailable(String(VERIFIER_DEFAULTS.deadlineMs / 1000)),
      { status: 200, body: VERDICT },
    ]);

    const { error, tookMs } = await timedFailure(verifierOf(server, false).keys.verify(SECRET));

    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(verifications(server)).toHaveLength(1);
    expect(tookMs).toBeLessThan(SLACK_MS);
  });

  it('retry a refused connection, every retry within the deadline', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    let attempts = 0;
    verifier = createVerifierClient({
      baseUrl,
      apiKey: 'sk-vfy-test',
      fetch: (request) => {
        attempts += 1;
        return fetch(request);
      },
    });

    const { error, tookMs } = await timedFailure(verifier.keys.verify(SECRET));

    expect(error).toBeInstanceOf(ConnectionError);
    expect(attempts).toBe(VERIFIER_DEFAULTS.maxRetries + 1);
    expect(tookMs).toBeLessThan(VERIFIER_DEFAULTS.deadlineMs);
  });

  it("are the ones the client's README shows", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const shown = Object.entries(VERIFIER_DEFAULTS)
      .map(([name, value]) => `${name}: ${value.toLocaleString('en-US').replaceAll(',', '_')}`)
      .join(', ');

    expect(readme).toContain(`  // ${shown}\n`);
  });

  it('give way to the options given', async () => {
    const server = await serve([{ hang: true }]);
    verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', maxRetries: 0, timeoutMs: 100 });

    const error = await failure(verifier.keys.verify(SECRET));

    expect(error).toMatchObject({ message: 'request timed out after 100 ms' });
    expect(verifications(server)).toHaveLength(1);
  });

  it("are not the admin client's, which waits for the server's retry-after and retries", async () => {
    const server = await serve([{ status: 500, body: '' }, unavailable(String(VERIFIER_DEFAULTS.deadlineMs / 1000))]);
    const admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: 'sk-adm-test', retryBaseDelayMs: 1 });

    const error = await failure(admin.apiKeys.verify(SECRET));

    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(verifications(server)).toHaveLength(3);
  });
});
