import { API_VERSION, LATEST_API_VERSION, OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import { startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AdminClient,
  type ApiKey,
  type ApiVersion,
  type CreateApiKeyBody,
  type CreatedApiKey,
  createAdminClient,
  hasOperation,
  InvalidRequestError,
  type RotatedApiKey,
  UnsupportedOperationError,
  type UpdateApiKeyBody,
} from '../src/index.js';
import { failure } from './support/failure.js';
import { observedFetch } from './support/observed-fetch.js';

// The key lifecycle of 2026-10-21 (create, rotate, expiry) through the client's default version, against the real
// server. Each test creates the keys it reads, in one organization of the file.

const SECRET = /^sk-api-[A-Za-z0-9]{49}$/;
const MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let server: TestServer;
let organization: TestOrganization;
let client: AdminClient;

/** An RFC 3339 time `seconds` from now, whole seconds, as a person would type it. */
function fromNow(seconds: number): string {
  return `${new Date(Math.floor(Date.now() / 1000) * 1000 + seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** The microsecond form the server answers with, of an RFC 3339 time in whole seconds. */
function micros(rfc3339: string): string {
  return rfc3339.replace(/Z$/, '.000000Z');
}

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('lifecycle');
  client = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
});

afterAll(async () => {
  await server?.close();
});

describe('apiKeys.create', () => {
  it('returns the new key with its secret, which a later retrieve does not hold', async () => {
    const created = await client.apiKeys.create({ name: 'billing' });

    expect(created.key).toMatch(SECRET);
    expect(created).toMatchObject({
      type: 'api_key',
      name: 'billing',
      status: 'active',
      expires_at: null,
      principal: null,
      scope: { type: 'workspace' },
      created_by: { type: 'service_account', id: organization.adminKeyId },
    });
    expect(created.partial_key_hint).toBe(`${created.key.slice(0, 11)}...${created.key.slice(-4)}`);
    const { key: _secret, ...stored } = created;
    const retrieved = await client.apiKeys.retrieve(created.id);
    expect(retrieved).toEqual(stored);
    expect(retrieved).not.toHaveProperty('key');
    expect(JSON.stringify(await client.apiKeys.list({ limit: 1000 }))).not.toContain(created.key);
  });

  it('creates a key that expires, in a workspace', async () => {
    const expiresAt = fromNow(3600);

    const created = await client.apiKeys.create({
      name: 'nightly export',
      workspace_id: 'wrkspc_lifecycle',
      expires_at: expiresAt,
    });

    expect(created).toMatchObject({
      expires_at: micros(expiresAt),
      scope: { type: 'workspace', workspace_id: 'wrkspc_lifecycle' },
      status: 'active',
    });
    expect(created.created_at).toMatch(MICROS);
  });

  it('creates a key bound to a principal, with organization scope', async () => {
    const created = await client.apiKeys.create({
      name: "alice's CLI",
      workspace_id: null,
      principal: { type: 'user_actor', user_id: 'user_alice' },
    });

    expect(created).toMatchObject({
      principal: { type: 'user_actor', user_id: 'user_alice' },
      scope: { type: 'organization' },
    });
  });

  it('is typed from the spec of 2026-10-21', () => {
    expectTypeOf(client.apiKeys.create).parameter(0).toEqualTypeOf<CreateApiKeyBody>();
    expectTypeOf(client.apiKeys.create).returns.resolves.toEqualTypeOf<CreatedApiKey>();
    expectTypeOf<CreatedApiKey['key']>().toEqualTypeOf<string>();
    expectTypeOf<CreateApiKeyBody>().toHaveProperty('expires_at');
    expectTypeOf<CreateApiKeyBody>().toHaveProperty('principal');
  });
});

describe('apiKeys.rotate', () => {
  it('without a grace period: a new active key with a new secret, and the old key expired at once', async () => {
    const old = await client.apiKeys.create({ name: 'rotate me', workspace_id: 'wrkspc_lifecycle' });
    const before = Date.now();

    const rotated = await client.apiKeys.rotate(old.id);

    expect(rotated.id).not.toBe(old.id);
    expect(rotated.key).toMatch(SECRET);
    expect(rotated.key).not.toBe(old.key);
    expect(rotated).toMatchObject({ name: 'rotate me', status: 'active', scope: old.scope, expires_at: null });
    expect(rotated.rotated_api_key).toMatchObject({ id: old.id, status: 'expired' });
    expect(rotated.rotated_api_key).not.toHaveProperty('key');
    const expiredAt = Date.parse(rotated.rotated_api_key.expires_at ?? '');
    expect(expiredAt).toBeGreaterThanOrEqual(before - 1000);
    expect(expiredAt).toBeLessThanOrEqual(Date.now());
    await expect(client.apiKeys.retrieve(old.id)).resolves.toEqual(rotated.rotated_api_key);
  });

  it('with a grace period: the old key stays active until the rotation plus the grace period', async () => {
    const old = await client.apiKeys.create({ name: 'rotate gently' });
    const before = Date.now();

    const rotated = await client.apiKeys.rotate(old.id, { grace_period_seconds: 86_400 });

    const after = Date.now();
    expect(rotated.rotated_api_key.status).toBe('active');
    const expiresAt = Date.parse(rotated.rotated_api_key.expires_at ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before - 1000 + 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 86_400_000);
    expect(rotated.expires_at).toBeNull();
  });

  it('keeps an earlier expiry of the old key, and gives the new key the old expiry', async () => {
    const expiresAt = fromNow(600);
    const old = await client.apiKeys.create({ name: 'expires soon', expires_at: expiresAt });

    const rotated = await client.apiKeys.rotate(old.id, { grace_period_seconds: 86_400 });

    expect(rotated.rotated_api_key.expires_at).toBe(micros(expiresAt));
    expect(rotated.expires_at).toBe(micros(expiresAt));
  });

  it('refuses to rotate an expired key with InvalidRequestError (400)', async () => {
    const old = await client.apiKeys.create({ name: 'rotated twice' });
    await client.apiKeys.rotate(old.id);

    const error = await failure(client.apiKeys.rotate(old.id));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error' });
  });

  it('refuses a grace period over the maximum of the spec (7 days) with InvalidRequestError', async () => {
    const old = await client.apiKeys.create({ name: 'long grace' });

    const error = await failure(client.apiKeys.rotate(old.id, { grace_period_seconds: 7 * 86_400 + 1 }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/grace_period_seconds/);
    await expect(client.apiKeys.retrieve(old.id)).resolves.toMatchObject({ status: 'active', expires_at: null });
  });

  it('is typed from the spec of 2026-10-21: the grace period may be omitted', () => {
    expectTypeOf(client.apiKeys.rotate).parameter(1).toEqualTypeOf<{ grace_period_seconds?: number } | undefined>();
    expectTypeOf(client.apiKeys.rotate).returns.resolves.toEqualTypeOf<RotatedApiKey>();
    expectTypeOf<RotatedApiKey['rotated_api_key']>().toEqualTypeOf<ApiKey>();
  });
});

describe('apiKeys.update with expires_at', () => {
  it('sets an expiry, and removes it with null', async () => {
    const key = await client.apiKeys.create({ name: 'to expire' });
    const expiresAt = fromNow(7200);

    const expiring = await client.apiKeys.update(key.id, { expires_at: expiresAt });
    const forever = await client.apiKeys.update(key.id, { expires_at: null });

    expect(expiring).toMatchObject({ id: key.id, expires_at: micros(expiresAt), status: 'active' });
    expect(forever).toMatchObject({ id: key.id, expires_at: null, status: 'active' });
    await expect(client.apiKeys.retrieve(key.id)).resolves.toEqual(forever);
  });

  it('leaves the expiry as it is when expires_at is omitted', async () => {
    const expiresAt = fromNow(7200);
    const key = await client.apiKeys.create({ name: 'keeps its expiry', expires_at: expiresAt });

    const renamed = await client.apiKeys.update(key.id, { name: 'renamed' });

    expect(renamed).toMatchObject({ name: 'renamed', expires_at: micros(expiresAt) });
  });

  it('refuses an expiry in the past with InvalidRequestError naming expires_at, and changes nothing', async () => {
    const key = await client.apiKeys.create({ name: 'not in the past' });

    const error = await failure(client.apiKeys.update(key.id, { expires_at: '2020-01-01T00:00:00Z' }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/^expires_at: /);
    await expect(client.apiKeys.retrieve(key.id)).resolves.toMatchObject({ expires_at: null });
  });

  it('refuses to change the expiry or the status of an expired key', async () => {
    const old = await client.apiKeys.create({ name: 'expired for good' });
    await client.apiKeys.rotate(old.id);

    const expiry = await failure(client.apiKeys.update(old.id, { expires_at: fromNow(3600) }));
    const status = await failure(client.apiKeys.update(old.id, { status: 'active' }));

    expect(expiry).toBeInstanceOf(InvalidRequestError);
    expect(status).toBeInstanceOf(InvalidRequestError);
    await expect(client.apiKeys.retrieve(old.id)).resolves.toMatchObject({ status: 'expired' });
  });

  it('is typed from the spec of 2026-10-21: expires_at takes a time or null', () => {
    expectTypeOf<UpdateApiKeyBody['expires_at']>().toEqualTypeOf<string | null | undefined>();
  });
});

describe('apiKeys.list with status=expired', () => {
  it('returns exactly the expired keys, which status=active never returns', async () => {
    const own = await server.createOrganization('expired keys');
    const ownClient = createAdminClient({ baseUrl: server.baseUrl, apiKey: own.adminKey });
    const expired = await ownClient.apiKeys.create({ name: 'will expire' });
    const live = await ownClient.apiKeys.create({ name: 'live' });
    const rotated = await ownClient.apiKeys.rotate(expired.id);

    const expiredPage = await ownClient.apiKeys.list({ status: 'expired' });
    const activePage = await ownClient.apiKeys.list({ status: 'active' });

    expect(expiredPage.data.map((key) => key.id)).toEqual([expired.id]);
    expect(expiredPage.data[0]?.status).toBe('expired');
    expect(activePage.data.map((key) => key.id)).toEqual([rotated.id, live.id]);
  });

  it('walks every page of expired keys with listAll', async () => {
    const own = await server.createOrganization('many expired keys');
    const ownClient = createAdminClient({ baseUrl: server.baseUrl, apiKey: own.adminKey });
    const expired: string[] = [];
    for (let index = 0; index < 5; index++) {
      const key = await ownClient.apiKeys.create({ name: `expired ${index}` });
      await ownClient.apiKeys.rotate(key.id);
      expired.unshift(key.id);
    }

    const walked: string[] = [];
    for await (const key of ownClient.apiKeys.listAll({ status: 'expired', limit: 2 })) {
      walked.push(key.id);
    }

    expect(walked).toEqual(expired);
  });
});

describe('a client of 2023-06-01', () => {
  it('has no create or rotate in its type, and no expires_at in its update', () => {
    const old = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, apiVersion: API_VERSION });

    expectTypeOf(old.apiKeys).not.toHaveProperty('create');
    expectTypeOf(old.apiKeys).not.toHaveProperty('rotate');
    expectTypeOf<UpdateApiKeyBody<typeof API_VERSION>>().not.toHaveProperty('expires_at');
    // The checks the compiler makes on calls, as a caller would write them:
    const calls = () => {
      // @ts-expect-error createApiKey does not exist in 2023-06-01
      void old.apiKeys.create({ name: 'x' });
      // @ts-expect-error rotateApiKey does not exist in 2023-06-01
      void old.apiKeys.rotate('apikey_x');
      // @ts-expect-error 2023-06-01 updates have no expires_at
      void old.apiKeys.update('apikey_x', { expires_at: null });
    };
    expect(calls).toBeTypeOf('function');
  });

  it.each([
    ['create', 'createApiKey'],
    ['rotate', 'rotateApiKey'],
  ] as const)(
    'throws UnsupportedOperationError from %s, naming the version that introduced it, and sends nothing',
    async (method, operationId) => {
      const { fetch, sent } = observedFetch();
      const old = createAdminClient({
        baseUrl: server.baseUrl,
        apiKey: organization.adminKey,
        apiVersion: API_VERSION,
        fetch,
      });
      // A caller without types (plain JavaScript) reaches the method all the same.
      const untyped = old.apiKeys as unknown as Record<typeof method, (...args: unknown[]) => Promise<unknown>>;

      const error = await failure(method === 'create' ? untyped.create({ name: 'x' }) : untyped.rotate('apikey_x'));

      expect(error).toBeInstanceOf(UnsupportedOperationError);
      expect(error).toMatchObject({
        name: 'UnsupportedOperationError',
        type: 'unsupported_operation_error',
        status: undefined,
        operationId,
        introducedIn: OPERATION_INTRODUCED_IN[operationId],
        apiVersion: API_VERSION,
      });
      expect(error.message).toBe(
        `apiKeys.${method} (${operationId}) is available from API version ${LATEST_API_VERSION}; ` +
          `this client uses API version ${API_VERSION}`,
      );
      expect(sent).toHaveLength(0);
    },
  );

  it('sees a key that expired as inactive, without the fields it has no names for', async () => {
    const own = await server.createOrganization('seen by 2023');
    const latest = createAdminClient({ baseUrl: server.baseUrl, apiKey: own.adminKey });
    const old = createAdminClient({ baseUrl: server.baseUrl, apiKey: own.adminKey, apiVersion: API_VERSION });
    const key = await latest.apiKeys.create({ name: 'expires' });
    await latest.apiKeys.rotate(key.id);

    const seen = await old.apiKeys.retrieve(key.id);
    const inactive = await old.apiKeys.list({ status: 'inactive' });

    expect(seen).toMatchObject({ id: key.id, status: 'inactive' });
    for (const field of ['expires_at', 'principal', 'scope']) {
      expect(seen).not.toHaveProperty(field);
    }
    expect(inactive.data.map((each) => each.id)).toEqual([key.id]);
    expectTypeOf(seen.status).toEqualTypeOf<'active' | 'inactive' | 'archived'>();
  });
});

describe('createAdminClient and the API version', () => {
  it('speaks the latest version by default, apiVersion when given, and the deprecated version option', async () => {
    const { fetch, sent } = observedFetch();
    const base = { baseUrl: server.baseUrl, apiKey: organization.adminKey, fetch };

    const latest = createAdminClient(base);
    const chosen = createAdminClient({ ...base, apiVersion: API_VERSION });
    const alias = createAdminClient({ ...base, version: API_VERSION });
    const both = createAdminClient({ ...base, version: API_VERSION, apiVersion: LATEST_API_VERSION });
    for (const each of [latest, chosen, alias, both]) {
      await each.apiKeys.list({ limit: 1 });
    }

    expect([latest, chosen, alias, both].map((each) => each.apiVersion)).toEqual([
      LATEST_API_VERSION,
      API_VERSION,
      API_VERSION,
      LATEST_API_VERSION,
    ]);
    expect(sent.map((request) => request.headers.get('vendor-version'))).toEqual([
      LATEST_API_VERSION,
      API_VERSION,
      API_VERSION,
      LATEST_API_VERSION,
    ]);
    expectTypeOf(latest).toEqualTypeOf<AdminClient<typeof LATEST_API_VERSION>>();
    expectTypeOf(chosen).toEqualTypeOf<AdminClient<typeof API_VERSION>>();
    expectTypeOf(alias).toEqualTypeOf<AdminClient<typeof API_VERSION>>();
    expectTypeOf(both).toEqualTypeOf<AdminClient<typeof LATEST_API_VERSION>>();
  });

  it('types a client whose version is known only at run time with what every version has', () => {
    const version = API_VERSION as ApiVersion;
    const either = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey, apiVersion: version });

    expectTypeOf(either).toEqualTypeOf<AdminClient<ApiVersion>>();
    expectTypeOf(either.apiKeys).not.toHaveProperty('create');
    expectTypeOf(either.apiKeys.retrieve).returns.resolves.toEqualTypeOf<ApiKey<ApiVersion>>();
  });

  it('hasOperation tells which versions have an operation, from the versions of the spec', () => {
    expect(hasOperation(LATEST_API_VERSION, 'createApiKey')).toBe(true);
    expect(hasOperation(API_VERSION, 'createApiKey')).toBe(false);
    expect(hasOperation(API_VERSION, 'rotateApiKey')).toBe(false);
    expect(hasOperation(API_VERSION, 'listApiKeys')).toBe(true);
    expect(hasOperation('1999-01-01', 'listApiKeys')).toBe(false);
    const version: string = LATEST_API_VERSION;
    if (hasOperation(version, 'createApiKey')) {
      expectTypeOf(version).toEqualTypeOf<typeof LATEST_API_VERSION>();
    }
  });

  it('leaves a create in a version the spec does not list to the server', async () => {
    const { fetch, sent } = observedFetch();
    const unknown = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: organization.adminKey,
      apiVersion: '1999-01-01' as typeof LATEST_API_VERSION,
      fetch,
    });

    const error = await failure(unknown.apiKeys.create({ name: 'x' }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(sent).toHaveLength(1);
  });
});
