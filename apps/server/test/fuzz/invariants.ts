/**
 * The invariants every answer must keep, checked on the raw response: they throw an `InvariantError` that says
 * which invariant broke and shows the answer, with every secret replaced by its placeholder.
 */
import type { OperationId } from '@apikeys/api-types';
import { expectNoInternals, specErrors } from '@apikeys/server/testing';
import { type Answer, headerOf, type NoAnswer } from './exchange.js';
import type { Expectation } from './oracle.js';
import { type Bindings, ID_PLACEHOLDERS, SECRET_PLACEHOLDERS } from './request.js';
import type { SpecModel } from './spec-model.js';

/** A broken invariant: `invariant` names it, the message says what was seen. */
export class InvariantError extends Error {
  override name = 'InvariantError';

  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}

/** Error types that the HTTP layer answers with a status of their own besides the one of `x-http-status`. */
const EXTRA_STATUSES: Readonly<Record<string, readonly number[]>> = {
  // The spec's prose: 405 (method not allowed) and 415 (not JSON) are invalid requests; Node's parser adds 431.
  invalid_request_error: [405, 415, 431],
};

const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

/** What the checks need to know of the fixture. */
export interface CheckContext {
  model: SpecModel;
  bindings: Bindings;
  /** The key IDs of each organization, to check that a 200 shows only the caller's keys. */
  keyIds: { own: ReadonlySet<string>; other: ReadonlySet<string> };
  /** Every request ID seen so far: each must be new. */
  requestIds: Set<string>;
}

/** Every secret of the fixture and its random part (after `sk-xxx-`), with the placeholder that stands for it. */
export function secretsOf(bindings: Bindings): { value: string; shown: string }[] {
  return SECRET_PLACEHOLDERS.flatMap((name) => {
    const value = bindings[name];
    const random = value.replace(/^sk-[a-z]+-/, '');
    return [
      { value, shown: name },
      { value: random, shown: `<random part of ${name}>` },
    ];
  });
}

/** Replaces secrets, IDs and the host of the fixture by their placeholders, so that a report can be shared. */
export function redact(text: string, bindings: Bindings): string {
  let out = text;
  for (const { value, shown } of secretsOf(bindings)) {
    out = out.replaceAll(value, shown);
  }
  for (const name of [...ID_PLACEHOLDERS, '$HOST'] as const) {
    out = out.replaceAll(bindings[name], name);
  }
  return out;
}

/** The answer in short, for a report: status line, headers and the start of the body. */
export function describeAnswer(answer: Answer | NoAnswer): string {
  if (!answer.answered) {
    return `no answer (${answer.reason}); received: ${JSON.stringify(answer.partial.slice(0, 600))}`;
  }
  const body = answer.body.toString('utf8');
  return [
    answer.statusLine,
    ...answer.headers.map(([name, value]) => `${name}: ${value}`),
    '',
    body.length > 1500 ? `${body.slice(0, 1500)}… (${answer.body.length} bytes)` : body,
  ].join('\n');
}

function fail(invariant: string, detail: string): never {
  throw new InvariantError(invariant, detail);
}

/** Parses a JSON body, or fails the named invariant. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fail('the body is JSON', `not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
}

/** A copy of a response body without the names of keys, which hold whatever clients sent. */
function withoutNames(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => (key === 'name' ? '' : value));
}

/**
 * Checks an answer against every invariant that the answer alone can prove: an HTTP response, no 5xx, a status
 * the spec allows (and the exact one when the oracle knows it), a fresh `request-id`, a JSON body valid for the
 * operation and status, no secret, no internals, and for a 200 only the caller's keys, filtered as asked and
 * holding what was sent.
 */
export function checkAnswer(
  context: CheckContext,
  expectation: Expectation,
  answer: Answer | NoAnswer,
  method: string,
): void {
  if (!answer.answered) {
    fail('every request gets an HTTP response', answer.reason);
  }
  const raw = `${answer.head}\r\n\r\n${answer.body.toString('latin1')}`;
  for (const { value, shown } of secretsOf(context.bindings)) {
    if (raw.includes(value) || answer.body.toString('utf8').includes(value)) {
      fail('no secret in a response', `the response holds ${shown}`);
    }
  }
  const { status } = answer;
  if (status >= 500) {
    fail('no 5xx', `status ${status}`);
  }
  const operationId = expectation.operation?.operationId;
  if (!expectation.allowed.has(status)) {
    fail(
      'a status the spec allows',
      `${status} for ${operationId ?? 'a request outside any operation'}; allowed: ${[...expectation.allowed].sort().join(', ')}`,
    );
  }
  const requestIds = answer.headers.filter(([name]) => name.toLowerCase() === 'request-id').map(([, value]) => value);
  const [requestId] = requestIds;
  if (requestIds.length !== 1 || requestId === undefined || !REQUEST_ID.test(requestId)) {
    fail('one request-id header of the form req_ + 24 characters', `request-id: ${JSON.stringify(requestIds)}`);
  }
  if (context.requestIds.has(requestId)) {
    fail('a new request-id for every response', `${requestId} was already used`);
  }
  context.requestIds.add(requestId);
  if (!/^application\/json/.test(headerOf(answer, 'content-type') ?? '')) {
    fail('a JSON content type', `content-type: ${headerOf(answer, 'content-type')}`);
  }
  const text = answer.body.toString('utf8');
  if (method === 'HEAD') {
    if (answer.body.length > 0) {
      fail('no body in the answer to HEAD', `${answer.body.length} bytes`);
    }
  } else {
    const body = parseJson(text);
    const documented = expectation.operation?.statuses.includes(status) === true;
    const problems = specErrors((documented ? operationId : undefined) as OperationId | undefined, status, body);
    if (problems.length > 0) {
      fail(
        'the body validates against the spec',
        `${documented ? operationId : 'ErrorResponse'} ${status}: ${problems.join('; ')}`,
      );
    }
    if (status >= 400) {
      const error = body as { error: { type: string; message: string }; request_id: string };
      if (error.request_id !== requestId) {
        fail('the body repeats the request-id', `${error.request_id} in the body, ${requestId} in the header`);
      }
      const typeStatus = context.model.errorStatuses[error.error.type];
      if (typeStatus !== status && !EXTRA_STATUSES[error.error.type]?.includes(status)) {
        fail('the error type matches the status', `${error.error.type} with ${status}`);
      }
      expectNoInternals(text);
      checkExact(expectation, status, error.error.message);
    } else {
      expectNoInternals(JSON.stringify(withoutNames(body)));
      checkExact(expectation, status, '');
      checkSuccess(context, expectation, body, status);
    }
  }
  if (status === 405) {
    const allow = (headerOf(answer, 'allow') ?? '')
      .split(',')
      .map((method) => method.trim())
      .filter(Boolean)
      .sort();
    const declared = [...(expectation.path?.methods ?? [])].sort();
    if (allow.join() !== declared.join()) {
      fail(
        'a 405 lists the methods of the path in Allow',
        `Allow: ${allow.join(', ')}; the spec: ${declared.join(', ')}`,
      );
    }
  }
}

/** The oracle's exact expectation: the status, and for a refusal with one reason, a message that names it. */
function checkExact(expectation: Expectation, status: number, message: string): void {
  const exact = expectation.exact;
  if (!exact) {
    return;
  }
  if (!exact.statuses.includes(status)) {
    fail(
      'the status the spec gives this request',
      `${status}, expected ${exact.statuses.join(' or ')} for ${exact.why}`,
    );
  }
  if ((status === 400 || status === 415) && exact.prefixes.length > 0) {
    const named = exact.prefixes.some((prefix) => message.startsWith(`${prefix}:`) || message.startsWith(`${prefix}.`));
    if (!named) {
      fail(
        'a refusal names the offending parameter or field',
        `${JSON.stringify(message)} for ${exact.why}; expected it to start with ${exact.prefixes.map((p) => `"${p}:"`).join(' or ')}`,
      );
    }
  }
}

/** A 200 shows only the caller's keys, filtered as asked, and a write returns exactly the values it was sent. */
function checkSuccess(context: CheckContext, expectation: Expectation, body: unknown, status: number): void {
  if (expectation.violations.length > 0) {
    fail('no silent acceptance', `${status} for ${expectation.violations.map((v) => v.reason).join('; ')}`);
  }
  const own = expectation.caller === 'other' ? context.keyIds.other : context.keyIds.own;
  const idShape = new RegExp(`${context.bindings.$KEY_ID.replace(/_.*$/, '')}_[A-Za-z0-9]{24}`, 'g');
  // Names are left out: a client may name a key after any ID.
  for (const id of JSON.stringify(withoutNames(body)).match(idShape) ?? []) {
    if (!own.has(id)) {
      fail(
        "a 200 shows only the caller's keys",
        `${id} does not belong to the caller's organization (${expectation.caller})`,
      );
    }
  }
  const data = (body as { data?: unknown }).data;
  if (Array.isArray(data)) {
    for (const [name, value] of expectation.query) {
      for (const item of data as Record<string, unknown>[]) {
        if (name in item && item[name] !== value) {
          fail(
            'a list holds only the items its filters ask for',
            `${name}=${JSON.stringify(value)} but an item has ${JSON.stringify(item[name])}`,
          );
        }
      }
    }
  }
  const sent = expectation.body;
  if (sent !== null && typeof sent === 'object' && !Array.isArray(sent)) {
    for (const [name, value] of Object.entries(sent)) {
      const returned = (body as Record<string, unknown>)[name];
      if (value !== null && returned !== undefined && JSON.stringify(returned) !== JSON.stringify(value)) {
        fail(
          'a write returns exactly what was sent',
          `${name}: sent ${JSON.stringify(value)}, returned ${JSON.stringify(returned)}`,
        );
      }
    }
  }
}
