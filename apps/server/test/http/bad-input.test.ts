import { LATEST_API_VERSION, type OperationId } from '@apikeys/api-types';
import {
  authHeaders,
  DEFAULT_ORGANIZATION,
  type ErrorBody,
  expectError,
  expectMatchesSpec,
  expectNoInternals,
  parseRawResponse,
  seededRandom,
  sendRaw,
  snapshotKeys,
  specErrors,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { type ApiKeyRecord, openSqliteStore, SQLITE_MEMORY, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ORG = DEFAULT_ORGANIZATION.id;
const LIST = '/v1/organizations/api_keys';
const ONE_MIB = 1024 * 1024;

/** One bad request and the error it must get. `path` receives the IDs of the fixture keys. */
interface BadInputCase {
  name: string;
  operationId: OperationId | undefined;
  method?: string;
  path: (ids: Fixture) => string;
  headers?: Record<string, string>;
  body?: RequestInit['body'];
  status: number;
  type: string;
  message: RegExp;
}

interface Fixture {
  target: string;
  older: string;
  foreign: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const one = (ids: Fixture) => `${LIST}/${ids.target}`;

function update(
  name: string,
  body: RequestInit['body'],
  status: number,
  message: RegExp,
  type = 'invalid_request_error',
) {
  return {
    name,
    operationId: 'updateApiKey',
    method: 'POST',
    path: one,
    headers: JSON_TYPE,
    body,
    status,
    type,
    message,
  } satisfies BadInputCase;
}

function list(name: string, query: (ids: Fixture) => string, message: RegExp): BadInputCase {
  return {
    name,
    operationId: 'listApiKeys',
    path: (ids) => `${LIST}?${query(ids)}`,
    status: 400,
    type: 'invalid_request_error',
    message,
  };
}

const CASES: BadInputCase[] = [
  update('malformed JSON', '{"name": "half', 400, /^body: .*JSON/),
  update('a 2 MiB body', JSON.stringify({ name: 'x'.repeat(2 * ONE_MIB) }), 413, /1 MiB/, 'request_too_large'),
  {
    ...update('a text/plain body', JSON.stringify({ name: 'renamed' }), 415, /^content-type: .*application\/json/),
    headers: { 'content-type': 'text/plain' },
  },
  {
    ...update('a form-encoded body', 'name=renamed', 415, /^content-type: .*application\/json/),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  },
  {
    // fetch adds no content-type for a byte array.
    ...update(
      'a JSON body without content-type',
      new TextEncoder().encode('{"name":"renamed"}'),
      415,
      /^content-type: .*application\/json/,
    ),
    headers: {},
  },
  update('an empty body with a JSON content-type', '', 400, /^body: /),
  update('body null', 'null', 400, /^body: /),
  update('body "str"', '"str"', 400, /^body: /),
  update('body 42', '42', 400, /^body: /),
  update('body []', '[]', 400, /^body: /),
  update('body [{"name":"renamed"}]', '[{"name":"renamed"}]', 400, /^body: /),
  update('name: 5', '{"name": 5}', 400, /^name: .*string/),
  update('name: null', '{"name": null}', 400, /^name: .*string/),
  update('name: ["a"]', '{"name": ["a"]}', 400, /^name: .*string/),
  update('status: 5', '{"status": 5}', 400, /^status: /),
  update('status: true', '{"status": true}', 400, /^status: /),
  update('an unknown field', '{"name": "renamed", "color": "red"}', 400, /^color: unknown field/),
  update('a __proto__ field', '{"name": "renamed", "__proto__": {"status": "archived"}}', 400, /^__proto__: /),
  update('a constructor field', '{"constructor": {"prototype": {"status": "archived"}}}', 400, /^constructor: /),
  update('a field named like the id', '{"id": "apikey_000000000000000000000000"}', 400, /^id: unknown field/),
  update("name ''", '{"name": ""}', 400, /^name: .*fewer than 1/),
  update('name of 501 code points', JSON.stringify({ name: '😀'.repeat(501) }), 400, /^name: .*more than 500/),
  update('name of 501 ASCII characters', JSON.stringify({ name: 'a'.repeat(501) }), 400, /^name: .*more than 500/),
  update("status 'bogus'", '{"status": "bogus"}', 400, /^status: .*"active".*"inactive".*"archived"/),
  update("a valid name with status 'bogus'", '{"name": "renamed", "status": "bogus"}', 400, /^status: /),
  update("status 'ACTIVE'", '{"status": "ACTIVE"}', 400, /^status: /),
  list('limit 0', () => 'limit=0', /^limit: .*>= 1/),
  list('limit 1001', () => 'limit=1001', /^limit: .*<= 1000/),
  list("limit 'abc'", () => 'limit=abc', /^limit: .*integer/),
  list("limit ''", () => 'limit=', /^limit: /),
  list('limit 1.5', () => 'limit=1.5', /^limit: .*integer/),
  list('limit -1', () => 'limit=-1', /^limit: /),
  list('limit=1&limit=2', () => 'limit=1&limit=2', /^limit: .*single/),
  list('status=active&status=inactive', () => 'status=active&status=inactive', /^status: .*single/),
  list('an unknown query parameter', () => 'colour=red', /^colour: .*unknown/),
  list('an unknown status filter', () => 'status=bogus', /^status: /),
  list("workspace_id ''", () => 'workspace_id=', /^workspace_id: /),
  list(
    'both cursors',
    (ids) => `before_id=${ids.target}&after_id=${ids.older}`,
    /before_id.*after_id|after_id.*before_id/,
  ),
  list('an unknown after_id', () => 'after_id=apikey_000000000000000000000000', /^after_id: /),
  list('an unknown before_id', () => 'before_id=apikey_000000000000000000000000', /^before_id: /),
  list("another organization's key as after_id", (ids) => `after_id=${ids.foreign}`, /^after_id: /),
  list("another organization's key as before_id", (ids) => `before_id=${ids.foreign}`, /^before_id: /),
  list('an over-long after_id', () => `after_id=${'a'.repeat(256)}`, /^after_id: .*255/),
  {
    name: 'an over-long path id (get)',
    operationId: 'getApiKey',
    path: () => `${LIST}/${'a'.repeat(256)}`,
    status: 400,
    type: 'invalid_request_error',
    message: /^api_key_id: .*255/,
  },
  {
    ...update('an over-long path id (update)', '{"name": "renamed"}', 400, /^api_key_id: .*255/),
    path: () => `${LIST}/${'a'.repeat(256)}`,
  },
  {
    name: 'malformed percent-encoding in the path (%zz)',
    operationId: 'getApiKey',
    path: () => `${LIST}/%zz`,
    status: 400,
    type: 'invalid_request_error',
    message: /^(api_key_id|path): .*percent-encoding/,
  },
  {
    ...update('malformed percent-encoding in the path (update)', '{"name": "renamed"}', 400, /percent-encoding/),
    path: () => `${LIST}/%E0%A4%A`,
  },
  {
    name: 'an unknown path',
    operationId: undefined,
    path: () => '/v1/organizations/keys',
    status: 404,
    type: 'not_found_error',
    message: /\/v1\/organizations\/keys/,
  },
  {
    name: 'a path below an API key',
    operationId: undefined,
    path: (ids) => `${LIST}/${ids.target}/secret`,
    status: 404,
    type: 'not_found_error',
    message: /no route/,
  },
  {
    name: 'the root path',
    operationId: undefined,
    path: () => '/',
    status: 404,
    type: 'not_found_error',
    message: /no route/,
  },
];

interface MethodCase {
  method: string;
  path: (ids: Fixture) => string;
  allow: string[];
}

const UNSUPPORTED_METHODS: MethodCase[] = [
  { method: 'DELETE', path: one, allow: ['GET', 'POST'] },
  { method: 'PUT', path: one, allow: ['GET', 'POST'] },
  { method: 'PATCH', path: one, allow: ['GET', 'POST'] },
  { method: 'DELETE', path: () => LIST, allow: ['GET'] },
  { method: 'PUT', path: () => LIST, allow: ['GET'] },
];

describe('bad input', () => {
  let server: TestServer;
  let fixture: Fixture;
  let otherOrganization: string;

  beforeAll(async () => {
    server = await startTestServer();
    const createdBy = { id: 'user_bad_input', type: 'user' as const };
    const older = await server.store.createApiKey({ organizationId: ORG, name: 'older', createdBy });
    const target = await server.store.createApiKey({
      organizationId: ORG,
      name: 'target',
      workspaceId: 'wrkspc_bad_input',
      createdBy,
    });
    otherOrganization = (await server.store.createOrganization('other')).id;
    const foreign = await server.store.createApiKey({ organizationId: otherOrganization, name: 'foreign', createdBy });
    fixture = { target: target.apiKey.id, older: older.apiKey.id, foreign: foreign.apiKey.id };
  });
  afterAll(() => server.close());

  async function state(): Promise<{ own: ApiKeyRecord[]; other: ApiKeyRecord[] }> {
    return {
      own: await snapshotKeys(server.store, ORG),
      other: await snapshotKeys(server.store, otherOrganization),
    };
  }

  describe.each(CASES)('$name', (testCase) => {
    it(`is refused with ${testCase.status} ${testCase.type}, naming the culprit, and changes nothing`, async () => {
      const before = await state();

      const result = await server.request(testCase.path(fixture), {
        method: testCase.method ?? 'GET',
        headers: authHeaders(server.adminKey, testCase.headers ?? {}),
        body: testCase.body ?? null,
      });

      expectError(result, testCase);
      expect(await state()).toEqual(before);
    });
  });

  describe.each(UNSUPPORTED_METHODS)('$method on a path that does not support it', ({ method, path, allow }) => {
    it('is refused with 405, an Allow header and an ErrorResponse, and changes nothing', async () => {
      const before = await state();

      const result = await server.request(path(fixture), {
        method,
        headers: authHeaders(server.adminKey, JSON_TYPE),
        body: method === 'DELETE' ? null : JSON.stringify({ name: 'renamed', status: 'archived' }),
      });

      expectError(result, { operationId: undefined, status: 405, type: 'invalid_request_error', message: /method/ });
      expect(result.body).toMatchObject({ error: { message: expect.stringContaining(method) } });
      const allowed = (result.response.headers.get('allow') ?? '').split(',').map((value) => value.trim());
      expect(allowed.sort()).toEqual([...allow].sort());
      expect(await state()).toEqual(before);
    });
  });

  describe.each([
    { name: 'a NUL byte in the path id', operationId: 'getApiKey', path: `${LIST}/a%00b`, allowed: [400, 404] },
    { name: 'a NUL byte in after_id', operationId: 'listApiKeys', path: `${LIST}?after_id=%00`, allowed: [400] },
    { name: 'a NUL byte in before_id', operationId: 'listApiKeys', path: `${LIST}?before_id=x%00`, allowed: [400] },
    {
      name: 'a NUL byte in workspace_id',
      operationId: 'listApiKeys',
      path: `${LIST}?workspace_id=wrkspc%00`,
      allowed: [200, 400],
    },
    {
      name: 'a NUL byte in created_by_user_id',
      operationId: 'listApiKeys',
      path: `${LIST}?created_by_user_id=%00user`,
      allowed: [200, 400],
    },
  ] as const)('$name', ({ operationId, path, allowed }) => {
    it('is answered without a 5xx, in the spec shape, and changes nothing', async () => {
      const before = await state();

      const result = await server.request(path, { headers: authHeaders(server.adminKey) });

      expect(allowed as readonly number[], result.text).toContain(result.response.status);
      expectMatchesSpec(operationId, result.response, result.body);
      expect(await state()).toEqual(before);
    });
  });

  it('answers a name holding a NUL byte without a 5xx: stored as sent, or refused naming name', async () => {
    const before = await state();

    const result = await server.request(`${LIST}/${fixture.target}`, {
      method: 'POST',
      headers: authHeaders(server.adminKey, JSON_TYPE),
      body: JSON.stringify({ name: 'nul\u0000name' }),
    });

    expect([200, 400], result.text).toContain(result.response.status);
    expectMatchesSpec('updateApiKey', result.response, result.body);
    if (result.response.status === 400) {
      expect((result.body as ErrorBody).error.message).toMatch(/^name: /);
      expect(await state()).toEqual(before);
    } else {
      expect((await server.store.getApiKey(ORG, fixture.target))?.name).toBe('nul\u0000name');
      await server.store.updateApiKey(ORG, fixture.target, { name: 'target' });
    }
  });

  it('refuses an unpaired surrogate at the bottom of a body nested as deep as 1 MiB allows, at once', async () => {
    // 500,000 levels of arrays in 1 MB: the path of the ill-formed string is walked back once, in linear time
    // (built with unshift, it took about 30 s at this depth, holding the event loop all that while).
    const depth = 500_000;
    const body = `{"metadata":{"a":${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}}}`;
    const started = performance.now();

    const result = await server.request(`${LIST}/${fixture.target}`, {
      method: 'POST',
      headers: authHeaders(server.adminKey, { ...JSON_TYPE, 'vendor-version': LATEST_API_VERSION }),
      body,
    });

    expect(result.response.status).toBe(400);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses a 2 MiB body sent without a content-length (chunked) with 413', async () => {
    const before = await state();
    const payload = new TextEncoder().encode(JSON.stringify({ name: 'y'.repeat(2 * ONE_MIB) }));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < payload.length; offset += 64 * 1024) {
          controller.enqueue(payload.subarray(offset, offset + 64 * 1024));
        }
        controller.close();
      },
    });

    const result = await server.request(`${LIST}/${fixture.target}`, {
      method: 'POST',
      headers: authHeaders(server.adminKey, JSON_TYPE),
      body: stream,
      duplex: 'half',
    } as RequestInit);

    expectError(result, {
      operationId: 'updateApiKey',
      status: 413,
      type: 'request_too_large',
      message: /1 MiB/,
    });
    expect(await state()).toEqual(before);
  });

  describe('accepts the boundaries of every rule it enforces', () => {
    it.each([
      ['limit=1', 1],
      ['limit=1000', 2],
    ])('accepts %s', async (query) => {
      const result = await server.request(`${LIST}?${query}`, { headers: authHeaders(server.adminKey) });
      expect(result.response.status).toBe(200);
      expectMatchesSpec('listApiKeys', result.response, result.body);
    });

    it.each([
      ['a name of 1 character', 'a'],
      ['a name of 500 ASCII characters', 'b'.repeat(500)],
      ['a name of 500 astral code points (1000 UTF-16 units)', '😀'.repeat(500)],
    ])('accepts %s', async (_label, name) => {
      const result = await server.request(`${LIST}/${fixture.older}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, JSON_TYPE),
        body: JSON.stringify({ name }),
      });
      expect(result.response.status, result.text).toBe(200);
      expectMatchesSpec('updateApiKey', result.response, result.body);
      expect((await server.store.getApiKey(ORG, fixture.older))?.name).toBe(name);
    });

    it('accepts application/json; charset=utf-8', async () => {
      const result = await server.request(`${LIST}/${fixture.older}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, { 'content-type': 'application/json; charset=utf-8' }),
        body: JSON.stringify({ name: 'charset' }),
      });
      expect(result.response.status, result.text).toBe(200);
    });
  });

  describe('requests the HTTP parser rejects before Express', () => {
    it.each([
      ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
      ['a request line without a version', 'GET /v1/organizations/api_keys\r\n\r\n', 400],
      ['a space in the path', 'GET /v1/organizations/api keys HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n', 400],
      [
        'both Content-Length and Transfer-Encoding',
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
      ],
      ['headers over 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nx-filler: ${'f'.repeat(20 * 1024)}\r\n\r\n`, 431],
    ])('answers %s with a JSON ErrorResponse and a request-id', async (_label, payload, status) => {
      const raw = await sendRaw(server.baseUrl, payload);

      const response = parseRawResponse(raw);
      expect(response.status, raw).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const requestId = response.headers.get('request-id');
      expect(requestId).toMatch(/^req_[A-Za-z0-9]{24}$/);
      const body = JSON.parse(response.body) as ErrorBody;
      expect(specErrors(undefined, status, body)).toEqual([]);
      expect(body.request_id).toBe(requestId);
      expect(body.error.type).toBe('invalid_request_error');
      expectNoInternals(response.body);
    });
  });

  it('never answers generated JSON bodies with a 5xx, and every refusal is a spec-valid 400 that changes nothing', async () => {
    const random = seededRandom(20_240_601);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
    const scalars = [
      null,
      true,
      0,
      -1,
      1.5,
      1e308,
      '',
      ' ',
      'active',
      'archived',
      'x'.repeat(600),
      '\u0000',
      '😀',
      '<script>',
      [],
      {},
      ['active'],
      { $gt: '' },
    ];
    const keys = ['name', 'status', 'id', 'type', '__proto__', 'constructor', 'prototype', 'created_at', ''];
    const before = await state();
    let refused = 0;

    for (let round = 0; round < 120; round += 1) {
      const body: Record<string, unknown> = {};
      const size = Math.floor(random() * 3) + 1;
      for (let field = 0; field < size; field += 1) {
        Object.defineProperty(body, pick(keys), { value: pick(scalars), enumerable: true, configurable: true });
      }
      // Keep every generated body invalid (an unknown field), so that no request may change anything.
      body.zz_unknown = round;
      const text = JSON.stringify(body);

      const result = await server.request(`${LIST}/${fixture.target}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, JSON_TYPE),
        body: text,
      });

      expect(result.response.status, `${text} → ${result.text}`).toBe(400);
      expectMatchesSpec('updateApiKey', result.response, result.body);
      expectNoInternals(result.text);
      refused += 1;
    }
    expect(refused).toBe(120);
    expect(await state()).toEqual(before);
  });

  it('never answers generated query strings with a 5xx', async () => {
    const random = seededRandom(7);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
    const names = ['limit', 'status', 'before_id', 'after_id', 'workspace_id', 'created_by_user_id', 'limit[]', 'x'];
    // NUL bytes have their own tests above.
    const values = ['', '0', '1', '1001', '-5', '1e3', 'abc', '%zz', '%C3%A9', 'active', 'null', '[]', 'a'.repeat(300)];
    const before = await state();

    for (let round = 0; round < 80; round += 1) {
      const parts = Array.from({ length: Math.floor(random() * 3) + 1 }, () => `${pick(names)}=${pick(values)}`);
      const query = parts.join('&');

      const result = await server.request(`${LIST}?${query}`, { headers: authHeaders(server.adminKey) });

      expect([200, 400], `${query} → ${result.text}`).toContain(result.response.status);
      expectMatchesSpec('listApiKeys', result.response, result.body);
      if (result.response.status === 400) {
        expectNoInternals(result.text);
      }
    }
    expect(await state()).toEqual(before);
  });
});

describe('an internal failure', () => {
  let server: TestServer;
  const INTERNAL_DETAIL = 'SQLITE_CORRUPT at /work/main/packages/store/src/kysely-store.ts:42:7';

  beforeAll(async () => {
    const { store, migrator } = openSqliteStore(SQLITE_MEMORY);
    // A store whose list fails with an error holding internal details that must never reach the client.
    const failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'listApiKeys') {
          return async () => {
            throw new Error(INTERNAL_DETAIL);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    server = await startTestServer({ opened: { store: failing as Store, migrator } });
  });
  afterAll(() => server.close());

  it('answers a generic 500 api_error without internals, and logs the details', async () => {
    const result = await server.request(LIST, { headers: authHeaders(server.adminKey) });

    const body = expectError(result, {
      operationId: 'listApiKeys',
      status: 500,
      type: 'api_error',
      message: 'internal server error',
    });
    expect(result.text).not.toContain('SQLITE_CORRUPT');
    expect(server.logLines.some((line) => line.includes('SQLITE_CORRUPT') && line.includes(body.request_id))).toBe(
      true,
    );
  });
});
