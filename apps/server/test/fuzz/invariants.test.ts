/**
 * The fuzzer's checks can fail: answers and servers that break each invariant on purpose are caught, with the
 * invariant named. (A checker that never fails would make the fuzzer pass whatever the server does.)
 */

import type { ApiKeyRecord } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import type { Answer, NoAnswer } from './exchange.js';
import type { Fixture } from './fixture.js';
import { type CheckContext, checkAnswer, InvariantError, registerFixtureSecrets } from './invariants.js';
import { expectationFor } from './oracle.js';
import { type Bindings, KEY_ID_PLACEHOLDERS, KEYS, SECRET_PLACEHOLDERS } from './placeholders.js';
import type { FuzzRequest } from './request.js';
import { SecretRegistry } from './secrets.js';
import { readSpecModels } from './spec-model.js';
import { get, LATEST, LIST, request } from './test-requests.js';

const models = readSpecModels();

/** Fake values: each secret a run of its own letter, each ID of its own digit. */
const bindings = Object.fromEntries([
  ...SECRET_PLACEHOLDERS.map((name, index) => {
    const prefix = name.includes('ADMIN') ? 'sk-adm-' : name.includes('VERIFIER') ? 'sk-vfy-' : 'sk-api-';
    return [name, `${prefix}${String.fromCharCode(65 + index).repeat(43)}`];
  }),
  ...KEY_ID_PLACEHOLDERS.map((name, index) => [name, `apikey_${String(index + 1).repeat(24)}`]),
  ['$EVENT_ID', `auditevt_0000000000000${'1'.repeat(17)}`],
  ['$OTHER_ORG_EVENT_ID', `auditevt_0000000000000${'2'.repeat(17)}`],
  ['$ADMIN_KEY_ID', `adminkey_${'1'.repeat(24)}`],
  ['$OTHER_ADMIN_KEY_ID', `adminkey_${'2'.repeat(24)}`],
  ['$HOST', '127.0.0.1:1'],
]) as Bindings;

/** A fixture of fake records that hold the facts of `placeholders.ts`. */
function fakeFixture(): Fixture {
  const keys = new Map<string, { organization: 'own' | 'other'; record: ApiKeyRecord }>();
  for (const name of KEY_ID_PLACEHOLDERS) {
    const { organization, state } = KEYS[name];
    const record: ApiKeyRecord = {
      id: bindings[name],
      name: name.toLowerCase(),
      workspaceId: null,
      scope: 'workspace',
      createdAt: 1_700_000_000_000_000,
      createdBy: { id: 'user_1', type: 'user' },
      partialKeyHint: 'sk-api-Ab3d...wXyZ',
      status: state === 'expired' ? 'active' : state,
      expiresAt: state === 'expired' ? 1_600_000_000_000_000 : null,
      principal: null,
      lastUsedAt: null,
    };
    keys.set(record.id, { organization, record });
  }
  return {
    bindings,
    organizations: { own: 'org_own', other: 'org_other' },
    defaultWorkspaces: { own: 'wrkspc_default_own', other: 'wrkspc_default_other' },
    keys,
    pools: { strings: [], byPrefix: {} },
    credentialsByPrefix: {},
  };
}

let counter = 0;
/** A fresh request ID, so that only the test about reused IDs reuses one. */
const requestId = () => `req_${String(counter++).padStart(24, '0')}`;

function answer(status: number, body: unknown, headers: [string, string][] = []): Answer {
  const id = requestId();
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const all: [string, string][] = [['request-id', id], ['content-type', 'application/json'], ...headers];
  return {
    answered: true,
    statusLine: `HTTP/1.1 ${status} X`,
    status,
    headers: all,
    head: [`HTTP/1.1 ${status} X`, ...all.map(([n, v]) => `${n}: ${v}`)].join('\r\n'),
    body: Buffer.from(text.replaceAll('$ID', id)),
  };
}

const error = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: '$ID' });
const key = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  type: 'api_key',
  name: 'k',
  workspace_id: null,
  created_at: '2024-10-30T23:58:27.427722Z',
  created_by: { id: 'user_1', type: 'user' },
  partial_key_hint: 'sk-api-Ab3d...wXyZ',
  status: 'active',
  ...fields,
});
const latestKey = (id: string, fields: Record<string, unknown> = {}) => {
  const { workspace_id: _, ...rest } = key(id, fields);
  return {
    expires_at: null,
    last_used_at: null,
    principal: null,
    scope: { type: 'workspace', workspace_id: 'wrkspc_default_own' },
    permissions: [],
    metadata: {},
    ...rest,
  };
};
const page = (ids: string[]) => ({ data: ids.map((id) => key(id)), has_more: false, first_id: null, last_id: null });

function context(): CheckContext {
  const fixture = fakeFixture();
  const secrets = new SecretRegistry();
  registerFixtureSecrets(secrets, bindings);
  const idsOf = (organization: string) =>
    new Set([...fixture.keys].filter(([, k]) => k.organization === organization).map(([id]) => id));
  return { fixture, keyIds: { own: idsOf('own'), other: idsOf('other') }, secrets, requestIds: new Set() };
}

/** The invariant `check` breaks, or undefined when it keeps them all. */
function broken(sent: FuzzRequest, reply: Answer | NoAnswer, checks = context()): string | undefined {
  try {
    checkAnswer(checks, expectationFor(sent, models, bindings), reply, sent.method);
    return undefined;
  } catch (problem) {
    return problem instanceof InvariantError
      ? problem.invariant
      : `${(problem as Error).name}: ${(problem as Error).message}`;
  }
}

describe('the invariants of an answer', () => {
  it('accept a valid answer (the control)', () => {
    expect(broken(get(LIST), answer(200, page([bindings.$KEY_ID])))).toBeUndefined();
    expect(
      broken(get(`${LIST}?limit=1e3`), answer(400, error('invalid_request_error', 'limit: must be an integer'))),
    ).toBeUndefined();
    expect(broken(get(LIST, { bearer: true }), answer(200, page([bindings.$KEY_ID])))).toBeUndefined();
  });

  it.each([
    ['a 500', get(LIST), answer(500, error('api_error', 'internal server error')), 'no 5xx'],
    ['a 503', get(LIST), answer(503, error('service_unavailable_error', 'down')), 'no 5xx'],
    [
      'no answer',
      get(LIST),
      { answered: false, reason: 'closed', partial: '' } as NoAnswer,
      'every request gets an HTTP response',
    ],
    [
      'the admin key in the body',
      get(LIST),
      answer(400, error('invalid_request_error', `x: ${bindings.$ADMIN_KEY}`)),
      'no secret in a response',
    ],
    [
      'an API key secret in a header',
      get(LIST),
      answer(200, page([]), [['x-debug', bindings.$API_KEY_SECRET]]),
      'no secret in a response',
    ],
    [
      "a secret's random part",
      get(LIST),
      answer(400, error('invalid_request_error', `x: ${bindings.$OTHER_API_KEY_SECRET.slice(7)}`)),
      'no secret in a response',
    ],
    [
      "16 characters of a verifier key's secret",
      get(LIST),
      answer(400, error('invalid_request_error', `x: ${bindings.$VERIFIER_KEY.slice(10, 26)}`)),
      'no secret in a response',
    ],
    ['an undocumented status', get(LIST), answer(404, error('not_found_error', 'no')), 'a status the spec allows'],
    ['a body the spec refuses', get(LIST), answer(200, { data: 'no' }), 'the body validates against the spec'],
    [
      "a body of another version's shape",
      get(LIST, { version: LATEST }),
      answer(200, page([bindings.$KEY_ID])),
      'the body validates against the spec',
    ],
    ['a body that is not JSON', get(LIST), answer(200, '<html>'), 'the body is JSON'],
    [
      'an error type of another status',
      get(LIST),
      answer(400, error('not_found_error', 'x')),
      'the error type matches the status',
    ],
    [
      'an ignored hostile integer (limit=1e3)',
      get(`${LIST}?limit=1e3`),
      answer(200, page([])),
      'the status the spec gives this request',
    ],
    [
      'a refusal that names another parameter',
      get(`${LIST}?limit=0x10`),
      answer(400, error('invalid_request_error', 'status: bad')),
      'a refusal names the offending parameter or field',
    ],
    [
      'a refused valid request',
      get(`${LIST}/$KEY_ID`),
      answer(404, error('not_found_error', 'no')),
      'the status the spec gives this request',
    ],
    [
      "another organization's key",
      get(LIST),
      answer(200, page([bindings.$OTHER_ORG_KEY_ID])),
      "a 200 shows only the caller's keys",
    ],
    [
      'a filter ignored',
      get(`${LIST}?status=inactive`),
      answer(200, page([bindings.$KEY_ID])),
      'a list holds only the items its filters ask for',
    ],
    [
      'a verifier key let through to another operation',
      get(LIST, { version: LATEST, credential: '$VERIFIER_KEY', bearer: true }),
      answer(200, { data: [], has_more: false, first_id: null, last_id: null }),
      'the status the spec gives this request',
    ],
    [
      'an operation of a later version served to an earlier one',
      request('POST', `${LIST}/$KEY_ID/rotate`, { body: {} }),
      answer(404, error('not_found_error', 'no such path')),
      'a status the spec allows',
    ],
    [
      'an expired key brought back',
      request('POST', `${LIST}/$EXPIRED_KEY_ID`, { version: LATEST, body: { status: 'active' } }),
      answer(200, latestKey(bindings.$EXPIRED_KEY_ID, { name: '$expired_key_id' })),
      'the status the spec gives this request',
    ],
    [
      'an expiry in the past',
      request('POST', LIST, { version: LATEST, body: { name: 'n', expires_at: '2001-01-01T00:00:00Z' } }),
      answer(200, { ...latestKey(`apikey_${'9'.repeat(24)}`), key: `sk-api-${'Z'.repeat(49)}` }),
      'the status the spec gives this request',
    ],
    [
      'an expiry refused without naming it',
      request('POST', LIST, { version: LATEST, body: { name: 'n', expires_at: '2201-01-01T00:00:00Z' } }),
      answer(400, error('invalid_request_error', 'name: bad')),
      'a refusal names the offending parameter or field',
    ],
    [
      'an inactive key verified as valid',
      request('POST', '/v1/keys/verify', {
        version: LATEST,
        credential: '$VERIFIER_KEY',
        body: { key: bindings.$INACTIVE_KEY_SECRET },
      }),
      answer(200, {
        valid: true,
        code: 'VALID',
        key: {
          id: bindings.$INACTIVE_KEY_ID,
          type: 'api_key',
          organization_id: 'org_own',
          name: 'k',
          scope: { type: 'workspace', workspace_id: 'w' },
          principal: null,
          expires_at: null,
          status: 'active',
          permissions: [],
          metadata: {},
        },
      }),
      'verifyApiKey answers the verdict the key state gives',
    ],
    [
      'an audit trail that ignores one of the types asked for',
      get('/v1/organizations/audit_events?type=api_key.created&type=api_key.rotated', { version: LATEST }),
      answer(200, {
        data: [
          {
            id: `auditevt_0000000000000${'3'.repeat(17)}`,
            type: 'api_key.updated',
            occurred_at: '2026-11-24T10:15:30.123456Z',
            actor: { type: 'admin_key', id: bindings.$ADMIN_KEY_ID },
            target: { type: 'api_key', id: bindings.$KEY_ID },
            changes: {},
            related: null,
            key_count: null,
            request_id: null,
            client: null,
          },
        ],
        has_more: false,
        first_id: null,
        last_id: null,
      }),
      'a list holds only the items its filters ask for',
    ],
    [
      'a rotation that ignores a body that is not JSON',
      {
        ...request('POST', `${LIST}/$KEY_ID/rotate`, { version: LATEST, body: {} }),
        headers: [
          ['host', '$HOST'],
          ['x-api-key', '$ADMIN_KEY'],
          ['vendor-version', LATEST],
          ['content-type', 'text/plain'],
        ],
      } satisfies FuzzRequest,
      answer(200, {
        ...latestKey(`apikey_${'9'.repeat(24)}`),
        key: `sk-api-${'Y'.repeat(49)}`,
        rotated_api_key: latestKey(bindings.$KEY_ID),
      }),
      'the status the spec gives this request',
    ],
    [
      'a malformed chunk taken for a body',
      {
        ...request('POST', LIST, { version: LATEST, body: { name: 'n' } }),
        framing: { kind: 'malformed-chunk', form: 'a size that is not hexadecimal' },
      } satisfies FuzzRequest,
      answer(200, { ...latestKey(`apikey_${'7'.repeat(24)}`, { name: 'n' }), key: `sk-api-${'X'.repeat(49)}` }),
      'the status the spec gives this request',
    ],
  ] as const)('catch %s', (_label, sent, reply, invariant) => {
    expect(broken(sent, reply)).toBe(invariant);
  });

  it('catch a request-id that is missing, malformed or reused', () => {
    const reply = answer(200, page([]));
    const without = { ...reply, headers: reply.headers.filter(([name]) => name !== 'request-id') };
    expect(broken(get(LIST), without)).toBe('one request-id header of the form req_ + 24 characters');
    const malformed = {
      ...reply,
      headers: reply.headers.map(([n, v]): [string, string] => [n, n === 'request-id' ? 'req_1' : v]),
    };
    expect(broken(get(LIST), malformed)).toBe('one request-id header of the form req_ + 24 characters');
    const checks = context();
    expect(broken(get(LIST), reply, checks)).toBeUndefined();
    expect(broken(get(LIST), reply, checks)).toBe('a new request-id for every response');
  });

  it('catch a 405 whose Allow does not list the methods of the path', () => {
    const put = { ...get(LIST), method: 'PUT' };
    const refusal = error('invalid_request_error', 'method PUT is not allowed');
    expect(broken(put, answer(405, refusal, [['allow', 'GET']]))).toBeUndefined();
    expect(broken(put, answer(405, refusal, [['allow', 'GET, POST']]))).toBe(
      'a 405 lists the methods of the path in Allow',
    );
  });

  it('catch a non-JSON content type and internals in an error body', () => {
    const reply = answer(400, error('invalid_request_error', 'limit: bad'));
    const html = {
      ...reply,
      headers: reply.headers.map(([n, v]): [string, string] => [n, n === 'content-type' ? 'text/html' : v]),
    };
    expect(broken(get(`${LIST}?limit=x`), html)).toBe('a JSON content type');
    const stack = answer(400, error('invalid_request_error', 'limit: at f (/srv/app.js:1:2)'));
    expect(broken(get(`${LIST}?limit=x`), stack)).toMatch(/^AssertionError: response body leaks internals/);
  });

  it('catch a new secret shown twice, and shown again in a later answer', () => {
    const create = request('POST', LIST, { version: LATEST, body: { name: 'new' } });
    const issued = `sk-api-${'Q'.repeat(49)}`;
    const created = { ...latestKey(`apikey_${'8'.repeat(24)}`, { name: 'new' }), key: issued };
    created.created_by = { type: 'service_account', id: bindings.$ADMIN_KEY_ID };
    const checks = context();
    expect(broken(create, answer(200, created, [['x-key', issued]]), checks)).toBe(
      'a new secret is shown once, in its key field',
    );
    const later = context();
    expect(broken(create, answer(200, created), later)).toBeUndefined();
    expect(broken(get(LIST), answer(400, error('invalid_request_error', `limit: ${issued}`)), later)).toBe(
      'no secret in a response',
    );
  });
});
