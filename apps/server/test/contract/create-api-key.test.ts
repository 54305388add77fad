import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  expectError,
  expectMatchesSpec,
  snapshotKeys,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { hashSecret } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesLargeBodies,
  refusesOtherMediaTypes,
  refusesOverBudget,
  refusesRegularKeys,
  refusesUnauthenticated,
  refusesVerifierKeys,
} from './refusals.js';

const VERSION = LATEST_API_VERSION;
const SECRET = /^sk-api-[A-Za-z0-9]{49}$/;
const HOUR_MS = 3_600_000;

// From 2026-10-21 on.
describe('createApiKey', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let defaultWorkspaceId: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('create tests');
    defaultWorkspaceId = (await server.store.getOrganization(org.id))?.defaultWorkspaceId ?? '';
  });
  afterAll(() => server.close());

  /** A raw create, so that any body can be sent; checks the response against the 2026-10-21 document. */
  async function create(body: unknown, adminKey = org.adminKey) {
    const result = await server.request(API_KEYS_PATH, {
      method: 'POST',
      headers: authHeaders(adminKey, { 'vendor-version': VERSION, 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    expectMatchesSpec('createApiKey', result.response, result.body, VERSION);
    return result;
  }

  const invalid = (message: RegExp | string) =>
    ({ operationId: 'createApiKey', status: 400, type: 'invalid_request_error', message, version: VERSION }) as const;

  describe('200 the new key, with its secret [2026-10-21]', () => {
    it('creates a key of the default workspace, returns its secret once, and records the admin key as creator', async () => {
      const { response, body } = await create({ name: 'Billing service' });
      const created = body as Record<string, unknown>;

      expect(response.status).toBe(200);
      expect(created).toMatchObject({
        type: 'api_key',
        name: 'Billing service',
        created_by: { type: 'service_account', id: org.adminKeyId },
        expires_at: null,
        principal: null,
        scope: { type: 'workspace', workspace_id: defaultWorkspaceId },
        status: 'active',
      });
      expect(defaultWorkspaceId).toMatch(/^wrkspc_[A-Za-z0-9]{24}$/);
      expect(created.key).toMatch(SECRET);
      const secret = created.key as string;
      expect(created.partial_key_hint).toBe(`${secret.slice(0, 11)}...${secret.slice(-4)}`);
      // The secret is a working key of this organization: only its hash was stored.
      expect(await server.store.findCredential(hashSecret(secret))).toEqual({
        kind: 'api_key',
        organizationId: org.id,
      });

      const later = await server.request(apiKeyPath(created.id as string), {
        headers: authHeaders(org.adminKey, { 'vendor-version': VERSION }),
      });
      const listed = await server.request(`${API_KEYS_PATH}?limit=1000`, {
        headers: authHeaders(org.adminKey, { 'vendor-version': VERSION }),
      });
      const { key: _secret, ...withoutSecret } = created;
      expect(later.body).toEqual(withoutSecret);
      for (const text of [later.text, listed.text, ...server.logLines]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.slice(7, 50));
      }
    });

    it('creates a key of a named workspace that expires, with the expiry in microseconds', async () => {
      const expiresAt = new Date(Date.now() + 24 * HOUR_MS);
      expiresAt.setUTCMilliseconds(250);
      const { response, body } = await create({
        name: 'Nightly export',
        workspace_id: 'wrkspc_exports',
        expires_at: expiresAt.toISOString().replace('.250Z', '.250001Z'),
      });

      expect(response.status).toBe(200);
      expect(body).toMatchObject({
        scope: { type: 'workspace', workspace_id: 'wrkspc_exports' },
        expires_at: expiresAt.toISOString().replace('.250Z', '.250001Z'),
        status: 'active',
      });
    });

    it('accepts an expiry with a time zone offset, and shows it in UTC', async () => {
      const { body } = await create({ name: 'offset', expires_at: '2099-01-31T01:00:00+01:00' });

      expect(body).toMatchObject({ expires_at: '2099-01-31T00:00:00.000000Z' });
    });

    it('gives a key bound to a principal organization scope when workspace_id is null', async () => {
      const { response, body } = await create({
        name: "Alice's CLI",
        workspace_id: null,
        principal: { type: 'user_actor', user_id: 'user_alice' },
      });

      expect(response.status).toBe(200);
      expect(body).toMatchObject({
        scope: { type: 'organization' },
        principal: { type: 'user_actor', user_id: 'user_alice' },
      });
    });

    it('binds a key of a workspace to a service account', async () => {
      const { body } = await create({
        name: 'robot',
        principal: { type: 'service_account_actor', service_account_id: 'svcacct_robot' },
      });

      expect(body).toMatchObject({
        scope: { type: 'workspace', workspace_id: defaultWorkspaceId },
        principal: { type: 'service_account_actor', service_account_id: 'svcacct_robot' },
      });
    });

    it("the organization's default workspace named by its real ID is the default workspace", async () => {
      const { body } = await create({ name: 'explicit default', workspace_id: defaultWorkspaceId });
      const id = (body as { id: string }).id;

      const old = await server.request(apiKeyPath(id), { headers: authHeaders(org.adminKey) });
      expect(old.body).toMatchObject({ workspace_id: null });
    });

    it("creates the key in the admin key's organization only", async () => {
      const other = await server.createOrganization('other');
      const { body } = await create({ name: 'mine' });
      const id = (body as { id: string }).id;

      const seenByOther = await server.request(apiKeyPath(id), {
        headers: authHeaders(other.adminKey, { 'vendor-version': VERSION }),
      });
      expect(seenByOther.response.status).toBe(404);
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    const cases: [string, unknown, RegExp | string][] = [
      ['organization scope without a principal', { name: 'x', workspace_id: null }, /^workspace_id: null/],
      [
        'an expiry in the past',
        { name: 'x', expires_at: '2001-01-01T00:00:00Z' },
        'expires_at: must lie in the future',
      ],
      ['an expiry without a time zone', { name: 'x', expires_at: '2099-01-01T00:00:00' }, /expires_at/],
      ['a date that does not exist', { name: 'x', expires_at: '2099-02-30T00:00:00Z' }, /expires_at/],
      ['more than six fractional digits', { name: 'x', expires_at: '2099-01-01T00:00:00.1234567Z' }, /expires_at/],
      ['no name', {}, /name/],
      ['an empty name', { name: '' }, /name/],
      ['an unknown field', { name: 'x', status: 'active' }, /status/],
      ['a workspace ID of another shape', { name: 'x', workspace_id: 'org_default' }, /workspace_id/],
      ['an unknown principal type', { name: 'x', principal: { type: 'robot', id: 'r' } }, /principal/],
    ];

    it.each(cases)('refuses %s and creates nothing', async (_, body, message) => {
      const before = await snapshotKeys(server.store, org.id);

      expectError(await create(body), invalid(message));

      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it('refuses a request of version 2023-06-01, naming the version that introduced the operation', async () => {
      const before = await snapshotKeys(server.store, org.id);
      const result = await server.request(API_KEYS_PATH, {
        method: 'POST',
        headers: authHeaders(org.adminKey, { 'content-type': 'application/json' }),
        body: JSON.stringify({ name: 'too early' }),
      });

      expectError(result, {
        operationId: undefined,
        status: 400,
        type: 'invalid_request_error',
        message: 'vendor-version: createApiKey is available from API version 2026-10-21; this request uses 2023-06-01',
      });
      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });
  });

  const operation: RefusedOperation = {
    version: VERSION,
    operationId: 'createApiKey',
    context: () => ({ server, organizationId: org.id }),
    path: async () => API_KEYS_PATH,
    body: { name: 'never created' },
    storeMethod: 'createApiKey',
  };
  const adminKey = () => org.adminKey;

  describe('401 authentication_error [2026-10-21]', () => refusesUnauthenticated(operation));
  describe('403 permission_error [2026-10-21]', () => {
    refusesRegularKeys(operation);
    refusesVerifierKeys(operation);
  });
  describe('413 request_too_large [2026-10-21]', () => refusesLargeBodies(operation, adminKey));
  describe('415 invalid_request_error (unsupported media type) [2026-10-21]', () =>
    refusesOtherMediaTypes(operation, adminKey));
  describe('429 rate_limit_error [2026-10-21]', () => refusesOverBudget(operation));
  describe('500 api_error [2026-10-21]', () => answersInternalErrors(operation, adminKey));
  describe('503 service_unavailable_error [2026-10-21]', () => answersUnavailable(operation, adminKey));
});
