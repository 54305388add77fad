/**
 * The invariants every answer must keep, checked on the raw response: they throw an `InvariantError` that says
 * which invariant broke and shows the answer, with every secret replaced by its placeholder.
 */
import { type AnyOperationId, LATEST_API_VERSION } from '@apikeys/api-types';
import { expectNoInternals, schemaErrors, specErrors } from '@apikeys/server/testing';
import { type Answer, headerOf, type NoAnswer } from './exchange.js';
import { InvariantError } from './invariant-error.js';
import type { Expectation } from './oracle.js';
import { type Bindings, ID_PLACEHOLDERS, SECRET_PLACEHOLDERS } from './placeholders.js';
import type { SecretRegistry } from './secrets.js';
import { checkSuccess, type SuccessContext, withoutNames } from './success-checks.js';

export { InvariantError } from './invariant-error.js';

/** Error types that the HTTP layer answers with a status of their own besides the one of `x-http-status`. */
const EXTRA_STATUSES: Readonly<Record<string, readonly number[]>> = {
  // The spec's prose: 405 (method not allowed) and 415 (not JSON) are invalid requests; Node's parser adds 431.
  invalid_request_error: [405, 415, 431],
};

const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

/** What the checks need to know of the run. */
export interface CheckContext extends SuccessContext {
  /** Every secret no response may hold: the fixture's, and those issued so far. */
  secrets: SecretRegistry;
  /** Every request ID seen so far: each must be new. */
  requestIds: Set<string>;
}

/** Registers the fixture's secrets, each under its placeholder. */
export function registerFixtureSecrets(secrets: SecretRegistry, bindings: Bindings): void {
  for (const name of SECRET_PLACEHOLDERS) {
    secrets.add(bindings[name], name);
  }
}

/** Replaces secrets, IDs and the host of the fixture by their placeholders, so that a report can be shared. */
export function redact(text: string, bindings: Bindings, secrets: SecretRegistry): string {
  let out = secrets.redact(text);
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
  const leak = context.secrets.find(raw) ?? context.secrets.find(answer.body.toString('utf8'));
  if (leak) {
    fail('no secret in a response', `the response holds ${leak.shown}`);
  }
  const { status } = answer;
  if (status >= 200 && status < 300) {
    // First, so that a secret issued by an answer that breaks another invariant is searched for all the same.
    checkIssuedSecret(context, answer.body.toString('utf8'), raw);
  }
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
  if (status === 200 && operationId === 'streamKeyChanges') {
    checkFirstEvent(context, expectation, answer);
    return;
  }
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
    const version = expectation.version ?? LATEST_API_VERSION;
    const problems = specErrors(
      (documented ? operationId : undefined) as AnyOperationId | undefined,
      status,
      body,
      version,
    );
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
      const typeStatus = expectation.model.errorStatuses[error.error.type];
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

/** The change feed's answer: an event stream whose first event is `subscribed`, as the spec writes it. */
function checkFirstEvent(context: CheckContext, expectation: Expectation, answer: Answer): void {
  if (!/^text\/event-stream/.test(headerOf(answer, 'content-type') ?? '')) {
    fail('an event stream', `content-type: ${headerOf(answer, 'content-type')}`);
  }
  const text = answer.body.toString('utf8');
  const match = /^event: subscribed\ndata: (.*)\n\n$/.exec(text);
  const event = match?.[1] === undefined ? undefined : parseJson(match[1]);
  const version = expectation.version ?? LATEST_API_VERSION;
  const problems = event === undefined ? ['no subscribed event'] : schemaErrors('KeyChangeFeedEvent', event, version);
  if (problems.length > 0) {
    fail('the first event is subscribed, as the spec writes it', `${JSON.stringify(text)}: ${problems.join('; ')}`);
  }
  checkExact(expectation, 200, '');
  checkSuccess(context, expectation, event, 200);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
    // An item of an array parameter may be named with its index (`type[1]:`).
    const named = exact.prefixes.some((prefix) =>
      new RegExp(`^${escapeRegExp(prefix)}(?:\\[\\d+\\])?[:.]`).test(message),
    );
    if (!named) {
      fail(
        'a refusal names the offending parameter or field',
        `${JSON.stringify(message)} for ${exact.why}; expected it to start with ${exact.prefixes.map((p) => `"${p}:"`).join(' or ')}`,
      );
    }
  }
}

/**
 * A secret a create or a rotation issues is in its response once, in `key`, and from then on in no response and no
 * log line: it joins the secrets every later answer and log line is searched for.
 */
function checkIssuedSecret(context: CheckContext, text: string, raw: string): void {
  let body: { key?: unknown; id?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return;
  }
  const { key, id } = body ?? {};
  if (typeof key !== 'string') {
    return;
  }
  const random = key.replace(/^sk-[a-z]+-/, '');
  const times = raw.split(random).length - 1;
  if (times !== 1) {
    fail('a new secret is shown once, in its key field', `the response holds it ${times} times`);
  }
  context.secrets.add(key, `<the secret issued to ${String(id)}>`);
}
