import { API_VERSION, LATEST_API_VERSION } from '@apikeys/api-types';
import { startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AdminClient,
  createAdminClient,
  createVerifierClient,
  type KeyVerification,
  PermissionError,
  UnsupportedOperationError,
  type VerificationCode,
} from '../src/index.js';
import { failure } from './support/failure.js';
import { observedFetch } from './support/observed-fetch.js';

// Verification through the client, against the real server: `apiKeys.verify` of the admin client, and the verifier
// client a gateway uses.

let server: TestServer;
let organization: TestOrganization;
let admin: AdminClient;
let verifierSecret: string;

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('verification');
  admin = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  ({ secret: verifierSecret } = await server.store.createVerifierKey({
    organizationId: organization.id,
    name: 'gateway',
  }));
});

afterAll(async () => {
  await server?.close();
});

describe('createVerifierClient: keys.verify', () => {
  it('says whether a secret is a valid key, and which, with a verifier key', async () => {
    const created = await admin.apiKeys.create({ name: 'behind the gateway' });
    const gateway = createVerifierClient({ baseUrl: server.baseUrl, apiKey: verifierSecret });

    const verdict = await gateway.keys.verify(created.key);

    expectTypeOf(verdict).toEqualTypeOf<KeyVerification>();
    expectTypeOf(verdict.code).toEqualTypeOf<VerificationCode>();
    expect(gateway.apiVersion).toBe(LATEST_API_VERSION);
    expect(verdict).toEqual({
      valid: true,
      code: 'VALID',
      key: {
        id: created.id,
        type: 'api_key',
        organization_id: organization.id,
        name: 'behind the gateway',
        scope: created.scope,
        principal: null,
        expires_at: null,
        status: 'active',
        permissions: [],
        metadata: {},
      },
    });
  });

  it('answers a deactivated key INACTIVE, and an unknown secret NOT_FOUND with no key', async () => {
    const created = await admin.apiKeys.create({ name: 'soon off' });
    await admin.apiKeys.update(created.id, { status: 'inactive' });
    const gateway = createVerifierClient({ baseUrl: server.baseUrl, apiKey: verifierSecret });

    expect(await gateway.keys.verify(created.key)).toMatchObject({ valid: false, code: 'INACTIVE' });
    expect(await gateway.keys.verify('sk-api-not-a-key')).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
  });

  it('sends the secret in the body only, never in the URL or a header', async () => {
    const { fetch, sent } = observedFetch();
    const gateway = createVerifierClient({ baseUrl: server.baseUrl, apiKey: verifierSecret, fetch });
    const secret = `sk-api-${'Q'.repeat(43)}`;

    await gateway.keys.verify(secret);

    expect(sent).toHaveLength(1);
    expect(sent[0]?.url.href).not.toContain(secret);
    expect([...(sent[0]?.headers.values() ?? [])].join(' ')).not.toContain(secret);
  });

  it('refuses an empty secret before sending anything', async () => {
    const { fetch, sent } = observedFetch();
    const gateway = createVerifierClient({ baseUrl: server.baseUrl, apiKey: verifierSecret, fetch });

    await expect(gateway.keys.verify('')).rejects.toThrow(new TypeError('secret must be a non-empty string'));
    expect(sent).toEqual([]);
  });
});

describe('apiKeys.verify', () => {
  it('verifies with the admin key too', async () => {
    const created = await admin.apiKeys.create({ name: 'admin verified' });

    expect(await admin.apiKeys.verify(created.key)).toMatchObject({ valid: true, key: { id: created.id } });
  });

  it('a verifier key is refused every other operation with a PermissionError', async () => {
    const asAdmin = createAdminClient({ baseUrl: server.baseUrl, apiKey: verifierSecret });

    const error = await failure(asAdmin.apiKeys.list());

    expect(error).toBeInstanceOf(PermissionError);
    expect(error.message).toBe(
      'a verifier key may only call the verification operations (POST /v1/keys/verify, GET /v1/keys/changes, POST /v1/keys/usage)',
    );
  });

  it('throws UnsupportedOperationError in a version without verifyApiKey, and sends nothing', async () => {
    const { fetch, sent } = observedFetch();
    const old = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: organization.adminKey,
      apiVersion: API_VERSION,
      fetch,
    });
    const untyped = old.apiKeys as unknown as { verify(secret: string): Promise<unknown> };

    const error = await failure(untyped.verify('sk-api-x'));

    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error.message).toBe(
      `apiKeys.verify (verifyApiKey) is available from API version ${LATEST_API_VERSION}; ` +
        `this client uses API version ${API_VERSION}`,
    );
    expect(sent).toEqual([]);
  });
});
