import {
  type AnyOperationId,
  API_VERSION,
  type ApiVersion,
  KEY_METADATA,
  LATEST_API_VERSION,
  PERMISSIONS,
} from '@apikeys/api-types';
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const VERSION = LATEST_API_VERSION;
const VERIFY_PATH = '/v1/keys/verify';

type Key = Record<string, unknown> & { id: string; key?: string };

/** Metadata nested `levels` deep, the object itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) {
    value = { deeper: value };
  }
  return value;
}

// The key's permissions and metadata (from 2026-10-21), through createApiKey, updateApiKey, rotateApiKey,
// listApiKeys, listAuditEvents and verifyApiKey; the grammar itself is tested once, in @apikeys/permissions.
describe('permissions and metadata', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let verifierKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('permission tests');
    ({ secret: verifierKey } = await server.store.createVerifierKey({ organizationId: org.id, name: 'gateway' }));
  });
  afterAll(() => server.close());

  const headers = (credential = org.adminKey, version: ApiVersion = VERSION) =>
    authHeaders(credential, { 'vendor-version': version, 'content-type': 'application/json' });

  async function send(
    operationId: AnyOperationId,
    path: string,
    body: unknown,
    init: { method?: string; version?: ApiVersion } = {},
  ) {
    const version = init.version ?? VERSION;
    const result = await server.request(path, {
      method: init.method ?? 'POST',
      headers: headers(org.adminKey, version),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expectMatchesSpec(operationId, result.response, result.body, version);
    return result;
  }
  const create = (body: unknown) => send('createApiKey', API_KEYS_PATH, body);
  const update = (id: string, body: unknown, version?: ApiVersion) =>
    send('updateApiKey', apiKeyPath(id), body, version === undefined ? {} : { version });
  const list = (query: string) => send('listApiKeys', `${API_KEYS_PATH}?${query}`, undefined, { method: 'GET' });
  async function verify(body: Record<string, unknown>) {
    const result = await server.request(VERIFY_PATH, {
      method: 'POST',
      headers: headers(verifierKey),
      body: JSON.stringify(body),
    });
    expectMatchesSpec('verifyApiKey', result.response, result.body, VERSION);
    return result;
  }
  const invalid = (operationId: AnyOperationId, message: RegExp | string, version: ApiVersion = VERSION) =>
    ({ operationId, status: 400, type: 'invalid_request_error', message, version }) as const;

  describe('createApiKey', () => {
    it('sets both, and shows them from then on; without them a key has none', async () => {
      const metadata = { owner: 'team-billing', limits: { daily: 1000, regions: ['eu', 'us'] }, beta: true };
      const { response, body } = await create({
        name: 'reporting',
        permissions: ['documents.read', 'admin.*'],
        metadata,
      });
      const plain = (await create({ name: 'plain', permissions: null, metadata: null })).body as Key;

      expect(response.status).toBe(200);
      expect(body).toMatchObject({ permissions: ['documents.read', 'admin.*'], metadata });
      expect(plain).toMatchObject({ permissions: [], metadata: {} });
      const { body: fetched } = await send('getApiKey', apiKeyPath((body as Key).id), undefined, { method: 'GET' });
      expect(fetched).toMatchObject({ permissions: ['documents.read', 'admin.*'], metadata });
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['a permission that is not a name', { permissions: ['Documents.read'] }, /^permissions\[0\]: /],
      ['an empty segment', { permissions: ['documents..read'] }, /^permissions\[0\]: /],
      ['a wildcard within a name', { permissions: ['documents.*.read'] }, /^permissions\[0\]: /],
      ['a name too long', { permissions: [`a${'.b'.repeat(PERMISSIONS.nameMaxLength / 2)}`] }, /^permissions\[0\]: /],
      [
        'too many permissions',
        { permissions: Array.from({ length: PERMISSIONS.maxItems + 1 }, (_, i) => `p${i}`) },
        /permissions/,
      ],
      ['a permission listed twice', { permissions: ['a.read', 'a.read'] }, /permissions/],
      ['permissions that are not a list', { permissions: 'documents.read' }, /permissions/],
      ['metadata that is a list', { metadata: ['owner'] }, /metadata/],
      ['metadata that is a string', { metadata: '{"owner":"a"}' }, /metadata/],
      ['metadata too large', { metadata: { blob: 'x'.repeat(KEY_METADATA.maxSerializedBytes) } }, /^metadata: .*4096/],
      ['metadata too deep', { metadata: nested(KEY_METADATA.maxDepth + 1) }, /^metadata: .*5/],
    ])('refuses %s with a 400 that names the field, and creates nothing', async (_, fields, message) => {
      const before = await snapshotKeys(server.store, org.id);

      expectError(await create({ name: 'refused', ...fields }), invalid('createApiKey', message));

      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it('takes metadata at its limits exactly: the largest size in bytes, the deepest nesting', async () => {
      // Two bytes per "é": the object's compact JSON is exactly the limit.
      const overhead = JSON.stringify({ blob: '' }).length;
      const room = KEY_METADATA.maxSerializedBytes - overhead;
      const largest = { blob: `${'é'.repeat(Math.floor(room / 2))}${'x'.repeat(room % 2)}` };
      expect(new TextEncoder().encode(JSON.stringify(largest)).length).toBe(KEY_METADATA.maxSerializedBytes);

      expect((await create({ name: 'largest', metadata: largest })).body).toMatchObject({ metadata: largest });
      const deepest = nested(KEY_METADATA.maxDepth);
      expect((await create({ name: 'deepest', metadata: deepest })).body).toMatchObject({ metadata: deepest });
    });
  });

  describe('updateApiKey', () => {
    it('replaces each as a whole; null or omitted leaves it; [] and {} clear it; the trail has each change', async () => {
      const key = (await create({ name: 'updated', permissions: ['a.read'], metadata: { x: 1 } })).body as Key;

      const replaced = (await update(key.id, { permissions: ['b.*', 'c.write'], metadata: { y: { z: 2 } } })).body;
      const untouched = (await update(key.id, { name: 'renamed', permissions: null, metadata: null })).body;
      const cleared = (await update(key.id, { permissions: [], metadata: {} })).body;

      expect(replaced).toMatchObject({ permissions: ['b.*', 'c.write'], metadata: { y: { z: 2 } } });
      expect(untouched).toMatchObject({ name: 'renamed', permissions: ['b.*', 'c.write'], metadata: { y: { z: 2 } } });
      expect(cleared).toMatchObject({ permissions: [], metadata: {} });
      const { body: trail } = await send(
        'listAuditEvents',
        `/v1/organizations/audit_events?target_id=${key.id}`,
        undefined,
        { method: 'GET' },
      );
      expect((trail as { data: { changes: unknown }[] }).data.map((event) => event.changes)).toEqual([
        { permissions: { from: ['b.*', 'c.write'], to: [] }, metadata: { from: { y: { z: 2 } }, to: {} } },
        { name: { from: 'updated', to: 'renamed' } },
        {
          permissions: { from: ['a.read'], to: ['b.*', 'c.write'] },
          metadata: { from: { x: 1 }, to: { y: { z: 2 } } },
        },
        {
          name: { from: null, to: 'updated' },
          status: { from: null, to: 'active' },
          permissions: { from: null, to: ['a.read'] },
          metadata: { from: null, to: { x: 1 } },
        },
      ]);
    });

    it('refuses bad values with a 400 naming the field, and changes nothing', async () => {
      const key = (await create({ name: 'kept', permissions: ['a.read'] })).body as Key;
      const before = await snapshotKeys(server.store, org.id);

      expectError(await update(key.id, { permissions: ['A'] }), invalid('updateApiKey', /^permissions\[0\]: /));
      expectError(
        await update(key.id, { name: 'x', metadata: nested(KEY_METADATA.maxDepth + 1) }),
        invalid('updateApiKey', /^metadata: /),
      );

      expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    });

    it(`is unknown to ${API_VERSION}, which refuses both fields and never shows them`, async () => {
      const key = (await create({ name: 'old clients', permissions: ['a.read'], metadata: { x: 1 } })).body as Key;

      expectError(
        await update(key.id, { permissions: [] }, API_VERSION),
        invalid('updateApiKey', /permissions/, API_VERSION),
      );
      const { body } = await update(key.id, { name: 'seen by old clients' }, API_VERSION);
      expect(Object.keys(body as Key)).not.toContain('permissions');
      expect(Object.keys(body as Key)).not.toContain('metadata');
    });
  });

  it('rotateApiKey gives the new key the permissions and metadata of the old', async () => {
    const key = (await create({ name: 'rotated', permissions: ['documents.*'], metadata: { owner: 'b' } })).body as Key;

    const { body } = await send('rotateApiKey', `${apiKeyPath(key.id)}/rotate`, {});

    expect(body).toMatchObject({
      permissions: ['documents.*'],
      metadata: { owner: 'b' },
      rotated_api_key: { id: key.id, permissions: ['documents.*'], metadata: { owner: 'b' } },
    });
  });

  describe('listApiKeys with permission', () => {
    it('returns the keys whose permissions grant it, wildcards included, and no other', async () => {
      const own = await server.createOrganization('permission filter');
      const make = async (name: string, permissions: string[]) => {
        const result = await server.request(API_KEYS_PATH, {
          method: 'POST',
          headers: headers(own.adminKey),
          body: JSON.stringify({ name, permissions }),
        });
        return (result.body as Key).id;
      };
      const exact = await make('exact', ['documents.read']);
      const wildcard = await make('wildcard', ['documents.*']);
      const everything = await make('everything', ['*']);
      await make('prefix only', ['documentsx.read']);
      await make('longer name', ['documents.reader']);
      await make('none', []);
      const page = async (query: string) => {
        const result = await server.request(`${API_KEYS_PATH}?${query}`, { headers: headers(own.adminKey) });
        expectMatchesSpec('listApiKeys', result.response, result.body, VERSION);
        return (result.body as { data: Key[] }).data.map((key) => key.id);
      };

      expect(await page('permission=documents.read')).toEqual([everything, wildcard, exact]);
      expect(await page(`permission=documents.read&limit=1&after_id=${everything}`)).toEqual([wildcard]);
      expect(await page('permission=')).toHaveLength(6);
    });

    it('refuses a value that is not a permission name with a 400 naming the parameter', async () => {
      expectError(await list('permission=Documents'), invalid('listApiKeys', /permission/));
      expectError(
        await send('listApiKeys', `${API_KEYS_PATH}?permission=a.read`, undefined, {
          method: 'GET',
          version: API_VERSION,
        }),
        invalid('listApiKeys', /permission/, API_VERSION),
      );
    });
  });

  describe('verifyApiKey with permissions', () => {
    let secret: string;
    let keyId: string;

    beforeAll(async () => {
      const created = (
        await create({
          name: 'gateway key',
          permissions: ['documents.read', 'billing.*'],
          metadata: { customer: 'cus_42', plan: 'pro' },
        })
      ).body as Key;
      secret = created.key as string;
      keyId = created.id;
    });

    it('carries the key permissions and metadata in every answer that names it', async () => {
      const { body } = await verify({ key: secret });

      expect(body).toMatchObject({
        valid: true,
        code: 'VALID',
        key: { id: keyId, permissions: ['documents.read', 'billing.*'], metadata: { customer: 'cus_42', plan: 'pro' } },
      });
    });

    it.each([
      ['documents.read', true],
      ['billing.invoices.write', true],
      ['documents.read AND billing.read', true],
      ['documents.write', false],
      ['documents.write OR billing.read', true],
      ['documents.read AND (documents.write OR admin.*)', false],
      ['billing.*', true],
      ['*', false],
    ])('%s: valid is %s', async (permissions, valid) => {
      const { response, body } = await verify({ key: secret, permissions });

      expect(response.status).toBe(200);
      expect(body).toMatchObject({
        valid,
        code: valid ? 'VALID' : 'INSUFFICIENT_PERMISSIONS',
        key: { id: keyId, status: 'active', permissions: ['documents.read', 'billing.*'] },
      });
    });

    it('answers the other codes first: an inactive key is INACTIVE whatever its permissions', async () => {
      const inactive = (await create({ name: 'inactive', permissions: [] })).body as Key;
      await update(inactive.id, { status: 'inactive' });

      const { body } = await verify({ key: inactive.key, permissions: 'documents.read' });
      const unknown = await verify({ key: `sk-api-${'A'.repeat(43)}`, permissions: 'documents.read' });

      expect(body).toMatchObject({ valid: false, code: 'INACTIVE' });
      expect(unknown.body).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
    });

    it.each([
      ['documents.read AND', /^permissions: expected a permission name or "\(" at position 19$/],
      ['(documents.read', /^permissions: "\(" is never closed at position 1$/],
      ['documents.read OR Admin', /^permissions: .* at position 19$/],
      ['', /permissions/],
    ])('refuses the malformed query %j with a 400 naming the position', async (permissions, message) => {
      const result = await server.request(VERIFY_PATH, {
        method: 'POST',
        headers: headers(verifierKey),
        body: JSON.stringify({ key: secret, permissions }),
      });

      expectError(result, invalid('verifyApiKey', message));
    });

    it('does not count an answer of INSUFFICIENT_PERMISSIONS as a use of the key', async () => {
      const unused = (await create({ name: 'never used', permissions: ['a.read'] })).body as Key;

      await verify({ key: unused.key, permissions: 'b.read' });
      await server.flushKeyUsage();

      expect((await server.store.getApiKey(org.id, unused.id))?.lastUsedAt).toBeNull();
    });
  });
});
