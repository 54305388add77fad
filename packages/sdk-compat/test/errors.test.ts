import {
  type Anthropic,
  APIError,
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PermissionDeniedError,
} from '@anthropic-ai/sdk';
import type { AnyOperationId } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  expectMatchesSpec,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKey } from './support/keys.js';
import { SDK_API_VERSION, sdkClient } from './support/sdk.js';

/** An ID of the right form that names no key. */
const UNKNOWN_ID = `apikey_${'0'.repeat(24)}`;

/** What a test expects of an error the SDK throws. */
interface ExpectedSdkError {
  errorClass: new (...args: never[]) => APIError;
  operationId: AnyOperationId;
  status: number;
  type: string;
  message: RegExp;
  /** The same request, sent raw with the headers the SDK sends, to compare bodies with. */
  raw: { path: string; method?: 'POST'; body?: string };
}

describe('SDK typed errors', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let client: Anthropic;
  let keyId: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('sdk errors');
    keyId = (await storeKey(server.store, org.id, { name: 'exists' })).id;
    client = sdkClient(org.adminKey, server.baseUrl);
  });
  afterAll(() => server.close());

  /** The error a call rejects with; it must be one of the SDK's API errors. */
  async function rejection(call: Promise<unknown>): Promise<APIError> {
    const error = await call.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    if (!(error instanceof APIError)) {
      throw new Error(`expected an APIError, got ${String(error)}`);
    }
    return error;
  }

  /**
   * Asserts an SDK error: its class and status; `requestID` is the response's `request-id`, which the body repeats;
   * `type` and `apiMessage` come from the body; the body is a spec-valid ErrorResponse of the SDK's version, and
   * the one the server sends for the same request made without the SDK (request IDs aside).
   */
  async function expectSdkError(error: APIError, adminKey: string, expected: ExpectedSdkError): Promise<void> {
    expect(error).toBeInstanceOf(expected.errorClass);
    expect(error.status).toBe(expected.status);
    const body = error.error as { type: string; error: { type: string; message: string }; request_id: string };
    expect(error.requestID).toMatch(/^req_[A-Za-z0-9]{24}$/);
    expect(body.request_id).toBe(error.requestID);
    expect([error.type, error.apiMessage]).toEqual([body.error.type, body.error.message]);
    expect(body.error.type).toBe(expected.type);
    expect(body.error.message).toMatch(expected.message);
    expectMatchesSpec(
      expected.operationId,
      { status: expected.status, headers: error.headers as Headers },
      body,
      SDK_API_VERSION,
    );
    const { method, body: rawBody, path } = expected.raw;
    const raw = await server.request(path, {
      method: method ?? 'GET',
      headers: {
        authorization: `Bearer ${adminKey}`,
        'anthropic-version': SDK_API_VERSION,
        ...(rawBody === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(rawBody === undefined ? {} : { body: rawBody }),
    });
    expect(raw.response.status).toBe(expected.status);
    expect({ ...body, request_id: 'same' }).toEqual({ ...(raw.body as object), request_id: 'same' });
  }

  describe('NotFoundError (404 not_found_error)', () => {
    it('retrieve of an unknown ID', async () => {
      const error = await rejection(client.beta.organization.apiKeys.retrieve(UNKNOWN_ID));

      await expectSdkError(error, org.adminKey, {
        errorClass: NotFoundError,
        operationId: 'getApiKey',
        status: 404,
        type: 'not_found_error',
        message: new RegExp(`no API key with ID ${UNKNOWN_ID}`),
        raw: { path: apiKeyPath(UNKNOWN_ID) },
      });
    });

    it('update of an unknown ID', async () => {
      const error = await rejection(client.beta.organization.apiKeys.update(UNKNOWN_ID, { name: 'nothing' }));

      await expectSdkError(error, org.adminKey, {
        errorClass: NotFoundError,
        operationId: 'updateApiKey',
        status: 404,
        type: 'not_found_error',
        message: /no API key with ID/,
        raw: { path: apiKeyPath(UNKNOWN_ID), method: 'POST', body: JSON.stringify({ name: 'nothing' }) },
      });
    });

    it("retrieve of another organization's key, as if it did not exist", async () => {
      const other = await server.createOrganization('sdk errors, other');
      const otherClient = sdkClient(other.adminKey, server.baseUrl);

      const error = await rejection(otherClient.beta.organization.apiKeys.retrieve(keyId));

      await expectSdkError(error, other.adminKey, {
        errorClass: NotFoundError,
        operationId: 'getApiKey',
        status: 404,
        type: 'not_found_error',
        message: /no API key with ID/,
        raw: { path: apiKeyPath(keyId) },
      });
    });
  });

  describe('BadRequestError (400 invalid_request_error)', () => {
    it.each([
      ['limit 0', { limit: 0 }, 'limit=0', /limit/],
      ['limit 1001', { limit: 1001 }, 'limit=1001', /limit/],
      ['both cursors', { before_id: 'apikey_a', after_id: 'apikey_b' }, 'before_id=apikey_a&after_id=apikey_b', /_id/],
      ['a cursor that names no key', { after_id: UNKNOWN_ID }, `after_id=${UNKNOWN_ID}`, /after_id/],
    ])('list with %s', async (_name, query, queryString, message) => {
      const error = await rejection(client.beta.organization.apiKeys.list(query));

      await expectSdkError(error, org.adminKey, {
        errorClass: BadRequestError,
        operationId: 'listApiKeys',
        status: 400,
        type: 'invalid_request_error',
        message,
        raw: { path: `${API_KEYS_PATH}?${queryString}` },
      });
    });

    it('update with an empty name', async () => {
      const error = await rejection(client.beta.organization.apiKeys.update(keyId, { name: '' }));

      await expectSdkError(error, org.adminKey, {
        errorClass: BadRequestError,
        operationId: 'updateApiKey',
        status: 400,
        type: 'invalid_request_error',
        message: /name/,
        raw: { path: apiKeyPath(keyId), method: 'POST', body: JSON.stringify({ name: '' }) },
      });
    });
  });

  describe('AuthenticationError (401 authentication_error)', () => {
    it('a second client with a disabled admin key', async () => {
      const disabled = await server.createOrganization('sdk errors, disabled admin key');
      await server.store.setAdminKeyStatus(disabled.adminKeyId, 'disabled');
      const disabledClient = sdkClient(disabled.adminKey, server.baseUrl);

      const error = await rejection(disabledClient.beta.organization.apiKeys.list());

      await expectSdkError(error, disabled.adminKey, {
        errorClass: AuthenticationError,
        operationId: 'listApiKeys',
        status: 401,
        type: 'authentication_error',
        message: /^invalid authorization$/,
        raw: { path: API_KEYS_PATH },
      });
    });

    it('a second client with a string that is no admin key', async () => {
      const wrong = 'sk-adm-not-a-real-key';
      const wrongClient = sdkClient(wrong, server.baseUrl);

      const error = await rejection(wrongClient.beta.organization.apiKeys.retrieve(keyId));

      await expectSdkError(error, wrong, {
        errorClass: AuthenticationError,
        operationId: 'getApiKey',
        status: 401,
        type: 'authentication_error',
        message: /^invalid authorization$/,
        raw: { path: apiKeyPath(keyId) },
      });
    });
  });

  describe('PermissionDeniedError (403 permission_error)', () => {
    it("a client given a regular API key's secret instead of an admin key", async () => {
      const { secret } = await server.store.createApiKey({
        organizationId: org.id,
        name: 'regular',
        createdBy: { id: 'user_sdk', type: 'user' },
      });
      const regularClient = sdkClient(secret, server.baseUrl);

      const error = await rejection(regularClient.beta.organization.apiKeys.list());

      await expectSdkError(error, secret, {
        errorClass: PermissionDeniedError,
        operationId: 'listApiKeys',
        status: 403,
        type: 'permission_error',
        message: /requires an admin key/,
        raw: { path: API_KEYS_PATH },
      });
    });
  });
});
