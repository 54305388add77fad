/**
 * The fuzzer's checks can fail: answers and servers that break each invariant on purpose are caught, with the
 * invariant named. (A checker that never fails would make the fuzzer pass whatever the server does.)
 */

import { startTestServer, type TestServer } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import { openSqliteStore, SQLITE_MEMORY, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer, NoAnswer } from './exchange.js';
import { createFixture, type Fixture, Fuzzer, FuzzFailure } from './fuzzer.js';
import { type CheckContext, checkAnswer, InvariantError } from './invariants.js';
import { expectationFor } from './oracle.js';
import type { Bindings, FuzzRequest } from './request.js';
import { readSpecModel } from './spec-model.js';

const model = readSpecModel(loadSpec());
const LIST = '/v1/organizations/api_keys';

const bindings: Bindings = {
  $ADMIN_KEY: `sk-adm-${'A'.repeat(43)}`,
  $OTHER_ADMIN_KEY: `sk-adm-${'B'.repeat(43)}`,
  $DISABLED_ADMIN_KEY: `sk-adm-${'C'.repeat(43)}`,
  $API_KEY_SECRET: `sk-api-${'D'.repeat(43)}`,
  $OTHER_API_KEY_SECRET: `sk-api-${'E'.repeat(43)}`,
  $KEY_ID: `apikey_${'1'.repeat(24)}`,
  $OLDER_KEY_ID: `apikey_${'2'.repeat(24)}`,
  $OTHER_ORG_KEY_ID: `apikey_${'3'.repeat(24)}`,
  $HOST: '127.0.0.1:1',
};

function get(target: string, headers: ([string, string] | [string])[] = []): FuzzRequest {
  return {
    labels: ['test'],
    method: 'GET',
    target,
    protocol: 'HTTP/1.1',
    headers: [['host', '$HOST'], ['x-api-key', '$ADMIN_KEY'], ['vendor-version', '2023-06-01'], ...headers],
    framing: { kind: 'length' },
    modelled: true,
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
const key = (id: string, name = 'k') => ({
  id,
  type: 'api_key',
  name,
  workspace_id: null,
  created_at: '2024-10-30T23:58:27.427722Z',
  created_by: { id: 'user_1', type: 'user' },
  partial_key_hint: 'sk-api-Ab3d...wXyZ',
  status: 'active',
});
const page = (ids: string[]) => ({ data: ids.map((id) => key(id)), has_more: false, first_id: null, last_id: null });

function context(): CheckContext {
  return {
    model,
    bindings,
    keyIds: { own: new Set([bindings.$KEY_ID, bindings.$OLDER_KEY_ID]), other: new Set([bindings.$OTHER_ORG_KEY_ID]) },
    requestIds: new Set(),
  };
}

/** The invariant `check` breaks, or undefined when it keeps them all. */
function broken(request: FuzzRequest, reply: Answer | NoAnswer, checks = context()): string | undefined {
  try {
    checkAnswer(checks, expectationFor(request, model, bindings), reply, request.method);
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
      answer(400, error('invalid_request_error', `x: ${'E'.repeat(43)}`)),
      'no secret in a response',
    ],
    ['an undocumented status', get(LIST), answer(404, error('not_found_error', 'no')), 'a status the spec allows'],
    ['a body the spec refuses', get(LIST), answer(200, { data: 'no' }), 'the body validates against the spec'],
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
  ] as const)('catch %s', (_label, request, reply, invariant) => {
    expect(broken(request, reply)).toBe(invariant);
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
});

describe('the invariants of the store and the log, on a sabotaged server', () => {
  let server: TestServer;
  let fixture: Fixture;
  let fuzzer: Fuzzer;
  let sabotage: ((store: Store, organizationId: string, id: string) => Promise<void>) | undefined;

  beforeAll(async () => {
    const { store, migrator } = openSqliteStore(SQLITE_MEMORY);
    // A store whose reads can be made to misbehave, the way a server bug would.
    const sabotaged = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'getApiKey') {
          return async (organizationId: string, id: string) => {
            await sabotage?.(target, organizationId, id);
            return target.getApiKey(organizationId, id);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    server = await startTestServer({ opened: { store: sabotaged as Store, migrator } });
    fixture = await createFixture(server);
    fuzzer = new Fuzzer(server, model, fixture);
  });
  afterAll(() => server.close());

  async function invariantBroken(request: FuzzRequest): Promise<string | undefined> {
    try {
      await fuzzer.send(request);
      return undefined;
    } catch (failure) {
      return failure instanceof FuzzFailure ? failure.invariant : String(failure);
    } finally {
      sabotage = undefined;
    }
  }

  it('keeps every invariant for a valid read (the control)', async () => {
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBeUndefined();
  });

  it('catches a read that changes a key, and restores it', async () => {
    sabotage = async (store, organizationId, id) => {
      await store.updateApiKey(organizationId, id, { name: 'changed by a read' });
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('a refused request (or a read) changes nothing');
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBeUndefined();
  });

  it('catches a refused request that changes a key', async () => {
    sabotage = async (store, organizationId) => {
      await store.updateApiKey(organizationId, fixture.bindings.$OLDER_KEY_ID, { status: 'archived' });
    };
    expect(await invariantBroken(get(`${LIST}/apikey_000000000000000000000000`))).toBe(
      'a refused request (or a read) changes nothing',
    );
  });

  it('catches a secret written to the log', async () => {
    sabotage = async () => {
      server.logLines.push(JSON.stringify({ msg: 'debug', key: fixture.bindings.$OTHER_ADMIN_KEY }));
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('no secret in a log line');
  });

  it('catches an exception the server does not catch', async () => {
    sabotage = async () => {
      fuzzer.uncaughtException(new RangeError('Maximum call stack size exceeded'));
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('the server never throws an uncaught exception');
  });

  it('catches a real 500 of the server', async () => {
    sabotage = async () => {
      throw new Error('the database is on fire');
    };
    expect(await invariantBroken(get(`${LIST}/$KEY_ID`))).toBe('no 5xx');
  });
});
