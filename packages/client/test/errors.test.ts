import { type ErrorType, MAX_REQUEST_BODY_BYTES } from '@apikeys/api-types';
import { createTestKey, startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminClient,
  ApiError,
  ApiKeysError,
  AuthenticationError,
  createAdminClient,
  errorClassFor,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  RequestTooLargeError,
} from '../src/index.js';
import { failure } from './support/failure.js';
import { observedFetch, type SentRequest } from './support/observed-fetch.js';
import { errorBody, startScriptedServer } from './support/scripted-server.js';

let server: TestServer;
let organization: TestOrganization;
let keyId: string;

function clientFor(
  apiKey: string,
  options: { maxRetries?: number } = {},
): { client: AdminClient; sent: SentRequest[] } {
  const { fetch, sent } = observedFetch();
  return { client: createAdminClient({ baseUrl: server.baseUrl, apiKey, fetch, ...options }), sent };
}

/** Checks what every error from the server carries: status, type, message, request ID (header = body) and body. */
function expectFromServer(error: ApiKeysError, status: number, type: ErrorType, message: RegExp): void {
  expect(error.status).toBe(status);
  expect(error.type).toBe(type);
  expect(error.message).toMatch(message);
  expect(error.requestId).toMatch(/^req_[A-Za-z0-9]{24}$/);
  expect(error.headers?.get('request-id')).toBe(error.requestId);
  expect(error.body).toEqual({ type: 'error', error: { type, message: error.message }, request_id: error.requestId });
}

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('errors');
  const { apiKey } = await createTestKey(server.store, organization.id, {
    name: 'target',
    createdBy: { id: 'user_errors', type: 'user' },
  });
  keyId = apiKey.id;
});

afterAll(async () => {
  await server?.close();
});

describe('errors from the server', () => {
  it('throws InvalidRequestError (400) naming the parameter, without retrying', async () => {
    const { client, sent } = clientFor(organization.adminKey);

    const error = await failure(client.apiKeys.list({ limit: 0 }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.name).toBe('InvalidRequestError');
    expectFromServer(error, 400, 'invalid_request_error', /^limit: /);
    expect(sent).toHaveLength(1);
  });

  it('throws InvalidRequestError for both cursors at once and for an invalid body', async () => {
    const { client } = clientFor(organization.adminKey);

    const cursors = await failure(client.apiKeys.list({ before_id: keyId, after_id: keyId }));
    const body = await failure(client.apiKeys.update(keyId, { name: '' }));

    expectFromServer(cursors, 400, 'invalid_request_error', /before_id|after_id/);
    expectFromServer(body, 400, 'invalid_request_error', /^name: /);
    expect(body).toBeInstanceOf(InvalidRequestError);
  });

  it('throws AuthenticationError (401) for an unknown admin key, without retrying', async () => {
    const { client, sent } = clientFor('sk-adm-unknown');

    const error = await failure(client.apiKeys.list());

    expect(error).toBeInstanceOf(AuthenticationError);
    expectFromServer(error, 401, 'authentication_error', /x-api-key/);
    expect(sent).toHaveLength(1);
  });

  it('throws PermissionError (403) for a regular API key used as the admin key', async () => {
    const { secret } = await createTestKey(server.store, organization.id, {
      name: 'regular',
      createdBy: { id: 'user_errors', type: 'user' },
    });
    const { client, sent } = clientFor(secret);

    const error = await failure(client.apiKeys.retrieve(keyId));

    expect(error).toBeInstanceOf(PermissionError);
    expectFromServer(error, 403, 'permission_error', /admin key/);
    expect(sent).toHaveLength(1);
  });

  it('throws NotFoundError (404) for an unknown key and for a key of another organization', async () => {
    const other = await server.createOrganization('other');
    const { client, sent } = clientFor(organization.adminKey);
    const { client: otherClient } = clientFor(other.adminKey);

    const retrieve = await failure(client.apiKeys.retrieve('apikey_000000000000000000000000'));
    const update = await failure(client.apiKeys.update('apikey_000000000000000000000000', { name: 'x' }));
    const foreign = await failure(otherClient.apiKeys.retrieve(keyId));

    for (const error of [retrieve, update, foreign]) {
      expect(error).toBeInstanceOf(NotFoundError);
      expectFromServer(error, 404, 'not_found_error', /^api_key_id: /);
    }
    expect(sent).toHaveLength(2);
  });

  it('throws RequestTooLargeError (413) for a body over the limit of the spec (1 MiB)', async () => {
    const { client, sent } = clientFor(organization.adminKey);

    const error = await failure(client.apiKeys.update(keyId, { name: 'x'.repeat(MAX_REQUEST_BODY_BYTES + 1) }));

    expect(error).toBeInstanceOf(RequestTooLargeError);
    expectFromServer(error, 413, 'request_too_large', /1 MiB/);
    expect(sent).toHaveLength(1);
  });

  it('throws ApiError (500) once the retries are used up', async () => {
    const broken = await startTestServer();
    try {
      await broken.store.close();
      const { fetch, sent } = observedFetch();
      const client = createAdminClient({
        baseUrl: broken.baseUrl,
        apiKey: broken.adminKey,
        fetch,
        retryBaseDelayMs: 1,
      });

      const error = await failure(client.apiKeys.list());

      expect(error).toBeInstanceOf(ApiError);
      expectFromServer(error, 500, 'api_error', /^internal server error$/);
      expect(sent).toHaveLength(3);
    } finally {
      await broken.close().catch(() => undefined);
    }
  });
});

describe('error bodies that do not follow the contract', () => {
  it('picks the class from the status, and says what came back', async () => {
    const scripted = await startScriptedServer([
      { status: 502, body: '<html>bad gateway</html>' },
      { status: 429, headers: { 'retry-after': '0' }, body: '' },
      { status: 404, body: { message: 'no route' } },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test', maxRetries: 0 });

      const gateway = await failure(client.apiKeys.list());
      const limited = await failure(client.apiKeys.list());
      const missing = await failure(client.apiKeys.list());

      expect(gateway).toBeInstanceOf(ApiError);
      expect(gateway).toMatchObject({
        status: 502,
        type: 'api_error',
        message: 'HTTP 502 Bad Gateway: <html>bad gateway</html>',
      });
      expect(gateway.requestId).toBe('req_scripted000000000502');
      expect(limited).toBeInstanceOf(RateLimitError);
      expect(limited).toMatchObject({ status: 429, message: 'HTTP 429 Too Many Requests' });
      expect(missing).toBeInstanceOf(NotFoundError);
    } finally {
      await scripted.close();
    }
  });

  it('keeps the message of an error type it does not know, and picks the class from the status', async () => {
    const scripted = await startScriptedServer([
      { status: 409, body: errorBody('conflict_error', 'the key changed meanwhile') },
      { status: 529, body: errorBody('overloaded_error', 'overloaded') },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test', maxRetries: 0 });

      const conflict = await failure(client.apiKeys.list());
      const overloaded = await failure(client.apiKeys.list());

      expect(conflict).toBeInstanceOf(InvalidRequestError);
      expect(conflict).toMatchObject({ status: 409, message: 'the key changed meanwhile' });
      expect(overloaded).toBeInstanceOf(ApiError);
      expect(overloaded).toMatchObject({ status: 529, message: 'overloaded' });
    } finally {
      await scripted.close();
    }
  });

  it('throws ApiError for a success whose body is not JSON', async () => {
    const scripted = await startScriptedServer([
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{' },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test' });

      const error = await failure(client.apiKeys.retrieve('apikey_x'));

      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 200, message: 'the response body is not valid JSON' });
      expect(error.cause).toBeInstanceOf(SyntaxError);
    } finally {
      await scripted.close();
    }
  });
});

describe('errorClassFor', () => {
  const types: ErrorType[] = [
    'invalid_request_error',
    'authentication_error',
    'permission_error',
    'not_found_error',
    'request_too_large',
    'rate_limit_error',
    'api_error',
  ];

  it.each(types)('maps %s to a class whose errors carry that type', (type) => {
    const ErrorClass = errorClassFor(type);

    const error = new ErrorClass('message', { status: 400, requestId: 'req_1' });

    expect(error).toBeInstanceOf(ApiKeysError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ type, status: 400, requestId: 'req_1', message: 'message' });
  });

  it('maps every type to a different class', () => {
    expect(new Set(types.map(errorClassFor)).size).toBe(types.length);
  });
});
