/**
 * The oracle: what the spec says the answer to a request may be, computed from the request and the spec alone
 * (never from the server's code). It reads the API version the request names, finds the operation of that
 * version's document it reaches, the statuses it may get, and the reasons the spec gives to refuse it for certain.
 *
 * The statuses accepted, and why:
 * - A request whose method and path (literal segments exactly, any non-empty segment for a parameter) are an
 *   operation's: the statuses the operation documents, except 500 and 503 (the database is up, so either is a
 *   bug). Plus 431 when the head nears Node's 16 KiB limit, and 400 when the request holds a form Node's
 *   parser may refuse (an odd method, byte or framing), which it answers with 400 in the error shape.
 * - Any other request: 404 for a path the spec does not declare, 405 (with `Allow`) for a method a declared path
 *   does not have, 400 naming the version for an operation of a later version; and what is checked before routing:
 *   400 (version, query), 401, 403, 429, and for POST/PUT/PATCH 413 and 415 (the body is read before routing).
 *   Never a 2xx.
 * - A modelled request (no form whose effect the oracle does not predict) is held to more: with no reason to
 *   refuse it, a success; with reasons (those of the schemas, and those of the spec's prose in `semantics.ts`),
 *   one of their statuses, and a message that starts with the name of a parameter or field they name (or where it
 *   was, when the name may not be quoted). Where the spec leaves an outcome open, both are allowed.
 */
import { API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import { HEADER_ALIASES } from './drafts.js';
import {
  BODY_METHODS,
  bodyViolations,
  type Caller,
  headerViolations,
  invalid,
  namePrefixes,
  queryViolations,
  type Violation,
} from './input-checks.js';
import { parameterTextConforms } from './parameter-values.js';
import type { Bindings } from './placeholders.js';
import { bind, type FuzzRequest, headText } from './request.js';
import { matchPath, nodeHeaders, splitTarget, strictDecode } from './request-reading.js';
import { semanticReasons, type Verdict, verdictFor } from './semantics.js';
import type { OperationModel, PathModel, SpecModel, SpecModels } from './spec-model.js';

/** Node's default limit on the size of a request head (`--max-http-header-size`). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** How far below the limit a head may be refused already (Node counts the head a little differently). */
const HEAD_SLACK = 1024;

/** What the answer to a request may be. */
export interface Expectation {
  /** The supported API version the request names, if any. */
  version?: ApiVersion;
  /** The document the request was read against: its version's, or the latest one's without a version. */
  model: SpecModel;
  /** The operation the method and path reach, if any. */
  operation?: OperationModel;
  /** The spec path the request-target matches, if any (for a 405's `Allow`). */
  path?: PathModel;
  /** Every status the answer may have. */
  allowed: Set<number>;
  /** Reasons to refuse the request for certain: a success (2xx) is then a silent acceptance. */
  violations: Violation[];
  /** The exact outcome, when the oracle can tell it: the statuses and the message prefixes. */
  exact?: { statuses: number[]; prefixes: string[]; why: string };
  /** The caller: an active admin or verifier key of the fixture. */
  caller?: Caller;
  /** The decoded path parameters. */
  pathValues: Record<string, string>;
  /** The decoded query parameters, every value of each name, without empty values that mean absent. */
  query: Map<string, string[]>;
  /** The body as the server reads it, parsed, for an operation that takes one. */
  body?: unknown;
  /** For a verification the spec accepts, what it must answer. */
  verdict?: Verdict;
  /** When the request was sent, in microseconds since the epoch. */
  now: bigint;
}

/** The supported version a request names in the version header or its alias, if any. */
function requestVersion(headers: Map<string, string>): ApiVersion | undefined {
  const [name, alias] = Object.entries(HEADER_ALIASES)[0] ?? [];
  const value = (name && headers.get(name)) || (alias && headers.get(alias)) || undefined;
  return API_VERSIONS.find((version) => version === value);
}

/** Whether a method and path reach an operation that a later version than `model`'s introduced. */
function laterOperation(models: SpecModels, model: SpecModel, method: string, rawPath: string): boolean {
  const latest = models[LATEST_API_VERSION];
  const matched = matchPath(latest, rawPath);
  const operation = latest.operations.find((o) => o.path === matched?.path && o.method === method);
  return operation !== undefined && !model.operations.some((o) => o.operationId === operation.operationId);
}

/** The union of the statuses of `reasons` and the prefixes a message may start with (none when one names none). */
function outcomeOf(reasons: readonly Violation[]): { statuses: number[]; prefixes: string[] } {
  const naming = reasons.filter((reason) => reason.statuses.some((status) => status === 400 || status === 415));
  const prefixes = naming.every((reason) => reason.prefixes.length > 0)
    ? [...new Set(naming.flatMap((reason) => reason.prefixes))]
    : [];
  return { statuses: [...new Set(reasons.flatMap((reason) => reason.statuses))], prefixes };
}

/** What the spec allows as the answer to `request`, sent at `now` (microseconds since the epoch). */
export function expectationFor(
  request: FuzzRequest,
  models: SpecModels,
  bindings: Bindings,
  now: bigint = BigInt(Date.now()) * 1000n,
): Expectation {
  const headers = nodeHeaders(request, bindings);
  const version = requestVersion(headers);
  const model = models[version ?? LATEST_API_VERSION];
  const target = splitTarget(bind(request.target, bindings));
  const matched = target && matchPath(model, target.path);
  const operation =
    matched?.path && model.operations.find((o) => o.path === matched.path && o.method === request.method);
  const { violations: headerProblems, caller } = headerViolations(operation, model, headers, bindings);
  const query = new Map<string, string[]>();
  const headBytes = Buffer.byteLength(headText(request, bindings, Buffer.alloc(0)), 'latin1');
  const allowed = new Set<number>();
  if (headBytes > MAX_HEAD_BYTES - HEAD_SLACK) {
    // Node may refuse a head over its limit (it does not count every header line: a head of many short lines can
    // pass), so 431 is allowed, never required.
    allowed.add(431);
  }
  if (!request.modelled || target?.fragment) {
    // A request the HTTP parser may refuse: Node's own 400 (in the error shape) is always possible.
    allowed.add(400);
  }
  const pathValues: Record<string, string> = {};
  const base = {
    model,
    allowed,
    query,
    pathValues,
    now,
    ...(version ? { version } : {}),
    ...(caller ? { caller } : {}),
    ...(matched ? { path: matched.path } : {}),
  };

  if (!operation) {
    const later = target !== undefined && laterOperation(models, model, request.method, target.path);
    const refusal = later ? 400 : matched ? 405 : 404;
    for (const status of [400, 401, 403, 429, refusal]) {
      allowed.add(status);
    }
    if (BODY_METHODS.has(request.method)) {
      allowed.add(413).add(415);
    }
    const clean =
      request.modelled &&
      headerProblems.length === 0 &&
      target?.query === undefined &&
      (!BODY_METHODS.has(request.method) || (request.body ?? []).length === 0) &&
      !request.headers.some(([name]) => name.toLowerCase() === 'content-encoding');
    return {
      ...base,
      violations: [invalid('no operation has this method and path', [], [])],
      ...(clean
        ? {
            exact: {
              statuses: [refusal, 429],
              prefixes: later ? ['vendor-version'] : [],
              why: later
                ? 'an authenticated request for an operation of a later version'
                : 'an authenticated request outside any operation',
            },
          }
        : {}),
    };
  }

  for (const status of operation.statuses) {
    if (status < 500) {
      allowed.add(status);
    }
  }
  const violations = [...headerProblems, ...queryViolations(operation, target?.query, query)];
  for (const parameter of operation.parameters.filter((p) => p.in === 'path')) {
    const raw = matched?.values[parameter.name] ?? '';
    const value = strictDecode(raw, false);
    if (value === undefined || !parameterTextConforms(parameter.schema, value)) {
      // An ID that cannot be valid also names no key: 404 fits as well as 400.
      violations.push(
        invalid(
          `path ${parameter.name} ${JSON.stringify(raw).slice(0, 60)}`,
          [400, 404],
          namePrefixes(parameter.name, 'path'),
        ),
      );
    } else {
      pathValues[parameter.name] = value;
    }
  }
  const body = bodyViolations(operation, request, headers, bindings, model.maxBodyBytes);
  violations.push(...body.violations);
  const possible = [...body.possible];
  const schemasAccept = violations.every((violation) => violation.statuses.every((status) => status >= 401));
  if (caller && schemasAccept && request.modelled) {
    // The prose's rules apply to what the schemas accept, in a request read as modelled: the credential's
    // refusals (401, 403) may come with them.
    const semantic = semanticReasons({ operation, caller, path: pathValues, query, body: body.parsed, bindings, now });
    violations.push(...semantic.violations);
    possible.push(...semantic.possible);
  }
  const verify = caller && violations.length === 0 && operation.operationId === 'verifyApiKey';
  const expectation: Expectation = {
    ...base,
    operation,
    violations,
    ...('parsed' in body ? { body: body.parsed } : {}),
    ...(verify
      ? {
          verdict: verdictFor(
            String((body.parsed as { key?: unknown }).key),
            caller,
            bindings,
            (body.parsed as { permissions?: unknown }).permissions,
          ),
        }
      : {}),
  };
  if (!request.modelled || headBytes > MAX_HEAD_BYTES - HEAD_SLACK) {
    return expectation;
  }
  const successes = operation.statuses.filter((status) => status >= 200 && status < 300);
  const refusal = outcomeOf([...violations, ...possible]);
  const statuses = [...(violations.length === 0 ? successes : []), ...refusal.statuses, 429];
  return {
    ...expectation,
    exact: {
      statuses: [...new Set(statuses)],
      prefixes: refusal.prefixes,
      why: [...violations, ...possible].map((reason) => reason.reason).join('; ') || `a request the spec accepts`,
    },
  };
}
