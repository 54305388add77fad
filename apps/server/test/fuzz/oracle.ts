/**
 * The oracle: what the spec says the answer to a request may be, computed from the request and the spec alone
 * (never from the server's code). It finds the operation a request reaches, the statuses it may get, and the
 * reasons the spec gives to refuse it for certain.
 *
 * The statuses accepted, and why:
 * - A request whose method and path (literal segments exactly, any non-empty segment for a parameter) are an
 *   operation's: the statuses the operation documents, except 500 and 503 (the database is up, so either is a
 *   bug). Plus 431 when the head nears Node's 16 KiB limit, and 400 when the request holds a form Node's
 *   parser may refuse (an odd method, byte or framing), which it answers with 400 in the error shape.
 * - Any other request: 404 for a path the spec does not declare, 405 (with `Allow`) for a method a declared path
 *   does not have; and what is checked before routing: 400 (version, query), 401, 403, 429, and for
 *   POST/PUT/PATCH 413 and 415 (the body is read before routing). Never a 2xx.
 * - A modelled request (no form whose effect the oracle does not predict) is held to more: with no reason to
 *   refuse it, a success or a refusal for what the handler finds in the values sent (a 400 naming a query
 *   parameter sent, a 404 unless every ID names a key of the caller's); with reasons, one of their statuses,
 *   and with a single reason, a message that starts with the name of the parameter or field (or where it was,
 *   when the name may not be quoted).
 */
import { isUtf8 } from 'node:buffer';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { loadSpec } from '@apikeys/spec';
import { quotable } from '../../src/domain/quotable.js';
import { HEADER_ALIASES } from './arbitraries.js';
import { type Bindings, bind, bodyAsRead, type FuzzRequest, headText } from './request.js';
import { conforms, holdsLoneSurrogate, parameterTextConforms } from './schema-values.js';
import { type OperationModel, type PathModel, readSpecModel, type SpecModel } from './spec-model.js';

/** The latest version's operations: one the fuzzed version lacks answers 400, naming the version that has it. */
const LATEST = readSpecModel(loadSpec(LATEST_API_VERSION));

/** Whether a method and path reach an operation that a later version than `model`'s introduced. */
function laterOperation(model: SpecModel, method: string, rawPath: string): boolean {
  const matched = matchPath(LATEST, rawPath);
  const operation = LATEST.operations.find((o) => o.path === matched?.path && o.method === method);
  return operation !== undefined && !model.operations.some((o) => o.operationId === operation.operationId);
}

/** Node's default limit on the size of a request head (`--max-http-header-size`). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** How far below the limit a head may be refused already (Node counts the head a little differently). */
const HEAD_SLACK = 1024;

/** The fixture's keys of each organization, by placeholder. */
const OWN_IDS = ['$KEY_ID', '$OLDER_KEY_ID'] as const;
const OTHER_IDS = ['$OTHER_ORG_KEY_ID'] as const;

/** Methods whose body the server reads (for any path: before it knows the route). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** One reason the spec gives to refuse a request, with the statuses and message prefixes it allows. */
export interface Violation {
  reason: string;
  statuses: number[];
  /** The message must start with one of these followed by `:` or `.` (an empty list: any message). */
  prefixes: string[];
}

/** What the answer to a request may be. */
export interface Expectation {
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
  /** Which organization the credential belongs to: `own` ($ADMIN_KEY), `other` ($OTHER_ADMIN_KEY), or none. */
  caller?: 'own' | 'other';
  /** The decoded query parameters (the last value of each name). */
  query: Map<string, string>;
  /** The body as the server reads it, parsed, for an operation that takes one. */
  body?: unknown;
}

/** Headers as Node presents them: names lower-cased, values trimmed, repeated headers joined (or discarded). */
export function nodeHeaders(request: FuzzRequest, bindings: Bindings): Map<string, string> {
  // Node keeps the first of these and discards repeats; it joins other repeated headers with ', ' (cookie: '; ').
  const single = new Set([
    'age',
    'authorization',
    'content-length',
    'content-type',
    'etag',
    'expires',
    'from',
    'host',
    'if-modified-since',
    'if-unmodified-since',
    'last-modified',
    'location',
    'max-forwards',
    'proxy-authorization',
    'referer',
    'retry-after',
    'server',
    'user-agent',
  ]);
  const headers = new Map<string, string>();
  for (const header of request.headers) {
    if (header.length === 1) {
      continue;
    }
    const name = header[0].toLowerCase();
    const value = bind(header[1], bindings).replace(/^[ \t]+|[ \t]+$/g, '');
    const previous = headers.get(name);
    if (previous === undefined) {
      headers.set(name, value);
    } else if (!single.has(name)) {
      headers.set(name, `${previous}${name === 'cookie' ? '; ' : ', '}${value}`);
    }
  }
  return headers;
}

/** Decodes a query or path component exactly: `+` as space in a query, and UTF-8 only; undefined otherwise. */
function strictDecode(raw: string, plusIsSpace: boolean): string | undefined {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replaceAll('+', ' ') : raw);
  } catch {
    return undefined;
  }
}

/** The path and query of a request-target, or undefined for targets without a path (`*`, a fragment, no leading slash). */
function splitTarget(target: string): { path: string; query: string | undefined; fragment: boolean } | undefined {
  let rest = target;
  let fragment = false;
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(rest);
  if (absolute) {
    rest = rest.slice(absolute[0].length) || '/';
  }
  if (!rest.startsWith('/')) {
    return undefined;
  }
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    // A request-target has no fragment (RFC 9112, section 3.2). A server may refuse it (400), or ignore it as user
    // agents never send one; either way the rest of the target names the operation.
    fragment = true;
    rest = rest.slice(0, hash);
  }
  const question = rest.indexOf('?');
  return question === -1
    ? { path: rest, query: undefined, fragment }
    : { path: rest.slice(0, question), query: rest.slice(question + 1), fragment };
}

/** The spec path a raw path matches, literal segments exactly (case and all), parameters as any non-empty segment. */
export function matchPath(
  model: SpecModel,
  rawPath: string,
): { path: PathModel; values: Record<string, string> } | undefined {
  const parts = rawPath.split('/').slice(1);
  let best: { path: PathModel; values: Record<string, string>; literals: number } | undefined;
  for (const path of model.paths) {
    if (path.segments.length !== parts.length) {
      continue;
    }
    const values: Record<string, string> = {};
    let literals = 0;
    const matches = path.segments.every((segment, index) => {
      const part = parts[index] ?? '';
      if ('literal' in segment) {
        literals += 1;
        return part === segment.literal;
      }
      values[segment.parameter] = part;
      return part !== '';
    });
    if (matches && (!best || literals > best.literals)) {
      best = { path, values, literals };
    }
  }
  return best && { path: best.path, values: best.values };
}

/** The message prefixes that name a parameter or field: its name when it may be quoted, else where it was. */
function namePrefixes(name: string, location: string): string[] {
  const base = name.split(/[[.]/)[0] ?? '';
  return [
    ...(quotable(name, 'name') ? [name] : []),
    ...(base !== name && quotable(base, 'name') ? [base] : []),
    location,
  ];
}

function invalid(reason: string, statuses: number[], prefixes: string[]): Violation {
  return { reason, statuses, prefixes };
}

/** RFC 3986 reserved characters: without `allowReserved`, a query value must percent-encode them (OpenAPI 3.1). */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

/** The reasons to refuse the query of an operation: encoding, repeats, unknown names, invalid values. */
function queryViolations(
  operation: OperationModel,
  rawQuery: string | undefined,
  decoded: Map<string, string>,
): Violation[] {
  const found: Violation[] = [];
  const declared = new Map(operation.parameters.filter((p) => p.in === 'query').map((p) => [p.name, p]));
  const seen = new Set<string>();
  for (const pair of (rawQuery ?? '').split('&')) {
    if (pair === '') {
      continue;
    }
    const equals = pair.indexOf('=');
    const name = strictDecode(equals === -1 ? pair : pair.slice(0, equals), true);
    const value = strictDecode(equals === -1 ? '' : pair.slice(equals + 1), true);
    if (name === undefined) {
      found.push(invalid(`a query parameter name is not UTF-8 percent-encoding (${pair})`, [400], ['query']));
      continue;
    }
    if (value === undefined) {
      found.push(invalid(`query ${name}: not UTF-8 percent-encoding`, [400], namePrefixes(name, 'query')));
      continue;
    }
    decoded.set(name, value);
    const parameter = declared.get(name);
    if (seen.has(name)) {
      found.push(invalid(`query ${name}: repeated`, [400], namePrefixes(name, 'query')));
    } else if (!parameter) {
      found.push(invalid(`query ${name}: unknown parameter`, [400], namePrefixes(name, 'query')));
    } else if (!parameter.allowReserved && RESERVED.test(equals === -1 ? '' : pair.slice(equals + 1))) {
      found.push(
        invalid(`query ${name}: a reserved character not percent-encoded`, [400], namePrefixes(name, 'query')),
      );
    } else if (!parameterTextConforms(parameter.schema, value)) {
      found.push(
        invalid(
          `query ${name}: ${JSON.stringify(value).slice(0, 60)} breaks its schema`,
          [400],
          namePrefixes(name, 'query'),
        ),
      );
    }
    seen.add(name);
  }
  for (const parameter of declared.values()) {
    if (parameter.required && !seen.has(parameter.name)) {
      found.push(invalid(`query ${parameter.name}: required`, [400], namePrefixes(parameter.name, 'query')));
    }
  }
  return found;
}

/** The top-level fields of a parsed body that break the body's schema (unknown, missing, or invalid). */
function offendingFields(operation: OperationModel, parsed: unknown): string[] {
  const schema = operation.body?.schema ?? {};
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return [];
  }
  const properties = schema.properties ?? {};
  const fields = Object.entries(parsed).flatMap(([key, value]) => {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!property) {
      return schema.additionalProperties === false ? [key] : [];
    }
    return conforms(property, value) && !holdsLoneSurrogate(value) ? [] : [key];
  });
  const missing = (schema.required ?? []).filter((name) => !Object.hasOwn(parsed, name));
  return [...fields, ...missing];
}

/** The parameters of a media type, lower-cased names, unquoted values. */
function mediaParameters(contentType: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of contentType.split(';').slice(1)) {
    const equals = part.indexOf('=');
    if (equals !== -1) {
      found.set(
        part.slice(0, equals).trim().toLowerCase(),
        part
          .slice(equals + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
    }
  }
  return found;
}

/** The reasons to refuse a body, and the body as parsed when it is JSON. */
function bodyViolations(
  operation: OperationModel,
  request: FuzzRequest,
  headers: Map<string, string>,
  bindings: Bindings,
  maxBodyBytes: number,
): { violations: Violation[]; parsed?: unknown } {
  const declared = operation.body;
  if (!declared || !BODY_METHODS.has(request.method)) {
    return { violations: [] };
  }
  // Encoding, size and media type are independent reasons: the spec gives none precedence over another.
  const found: Violation[] = [];
  const encoding = headers.get('content-encoding');
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    found.push(invalid(`content-encoding ${JSON.stringify(encoding)}`, [415], ['content-encoding']));
  }
  const read = bodyAsRead(request, bindings) ?? Buffer.alloc(0);
  if (read.length > maxBodyBytes) {
    found.push(invalid(`a body of ${read.length} bytes`, [413], []));
  }
  const contentType = headers.get('content-type');
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  const charset = contentType === undefined ? undefined : mediaParameters(contentType).get('charset');
  if (contentType === undefined || media === undefined || !declared.mediaTypes.includes(media)) {
    // Without a JSON content type, the body is not read: an empty one is still a missing body.
    found.push(invalid(`content-type ${JSON.stringify(contentType)}`, [415], ['content-type']));
  } else if (charset !== undefined && charset !== '' && charset.toLowerCase() !== 'utf-8') {
    // (An empty `charset=` names no charset: reading the body as UTF-8 then is no silent acceptance.)
    // The spec requires UTF-8; refusing the label (415) and failing to read the body as UTF-8 (400) both fit.
    found.push(invalid(`charset ${JSON.stringify(charset)}`, [400, 415], ['content-type', 'body']));
  }
  if (found.length > 0) {
    return { violations: found };
  }
  if (read.length === 0 && declared.required) {
    return { violations: [invalid('no body', [400], ['body'])] };
  }
  if (!isUtf8(read)) {
    return { violations: [invalid('the body is not UTF-8', [400], ['body'])] };
  }
  let parsed: unknown;
  try {
    // A UTF-8 byte order mark may be ignored (RFC 8259, section 8.1).
    parsed = JSON.parse(read.toString('utf8').replace(/^\ufeff/, ''));
  } catch {
    return { violations: [invalid('the body is not JSON', [400], ['body'])] };
  }
  const fields = offendingFields(operation, parsed);
  const prefixes = [...fields.flatMap((field) => namePrefixes(field, 'body')), 'body'];
  if (holdsLoneSurrogate(parsed)) {
    return { violations: [invalid('a string holds an unpaired surrogate', [400], prefixes)], parsed };
  }
  if (!conforms(declared.schema, parsed)) {
    return {
      violations: [invalid(`the body breaks its schema (${fields.join(', ') || 'its type'})`, [400], prefixes)],
      parsed,
    };
  }
  return { violations: [], parsed };
}

/** The reasons to refuse a request's credential and version headers. */
function headerViolations(
  operation: OperationModel | undefined,
  model: SpecModel,
  headers: Map<string, string>,
  bindings: Bindings,
): { violations: Violation[]; caller?: 'own' | 'other' } {
  const found: Violation[] = [];
  if (operation?.public) {
    // A probe reads no header: neither a credential nor a version.
    return { violations: found };
  }
  // The admin key comes in the credential header or, when that is absent or empty, as `Authorization: Bearer <key>`.
  const inHeader = headers.get(model.credentialHeader) || undefined;
  const authorization = headers.get('authorization');
  const bearer = authorization === undefined ? undefined : /^bearer +(\S+)$/i.exec(authorization)?.[1];
  const credential = inHeader ?? bearer;
  let caller: 'own' | 'other' | undefined;
  if (credential === undefined) {
    found.push(invalid(`${model.credentialHeader} missing`, [401], []));
  } else if (credential === bindings.$ADMIN_KEY) {
    caller = 'own';
  } else if (credential === bindings.$OTHER_ADMIN_KEY) {
    caller = 'other';
  } else if (credential === bindings.$API_KEY_SECRET || credential === bindings.$OTHER_API_KEY_SECRET) {
    found.push(invalid(`${model.credentialHeader} holds a regular API key`, [403], []));
  } else {
    found.push(invalid(`${model.credentialHeader} is no active admin key`, [401], []));
  }
  // Header parameters are the same for every operation; outside an operation, those of the first are required.
  const parameters = (operation ?? model.operations[0])?.parameters.filter((p) => p.in === 'header') ?? [];
  for (const parameter of parameters) {
    const name = parameter.name.toLowerCase();
    if (name === model.credentialHeader) {
      continue;
    }
    const alias = HEADER_ALIASES[name];
    let value = headers.get(name);
    if ((value === undefined || value === '') && alias !== undefined && headers.get(alias)) {
      value = headers.get(alias);
    }
    if (value === undefined || value === '') {
      if (parameter.required) {
        found.push(invalid(`${name} missing`, [400], [name]));
      }
    } else if (!parameterTextConforms(parameter.schema, value)) {
      found.push(invalid(`${name} ${JSON.stringify(value).slice(0, 40)} breaks its schema`, [400], [name]));
    }
  }
  return caller === undefined ? { violations: found } : { violations: found, caller };
}

/** What the spec allows as the answer to `request`. */
export function expectationFor(request: FuzzRequest, model: SpecModel, bindings: Bindings): Expectation {
  const target = splitTarget(bind(request.target, bindings));
  const matched = target && matchPath(model, target.path);
  const operation =
    matched?.path && model.operations.find((o) => o.path === matched.path && o.method === request.method);
  const headers = nodeHeaders(request, bindings);
  const { violations: headerProblems, caller } = headerViolations(operation, model, headers, bindings);
  const query = new Map<string, string>();
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
  const base = { allowed, query, ...(caller ? { caller } : {}), ...(matched ? { path: matched.path } : {}) };

  if (!operation) {
    const later = target !== undefined && laterOperation(model, request.method, target.path);
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
    }
  }
  const body = bodyViolations(operation, request, headers, bindings, model.maxBodyBytes);
  violations.push(...body.violations);
  const expectation: Expectation = {
    ...base,
    operation,
    violations,
    ...('parsed' in body ? { body: body.parsed } : {}),
  };
  if (!request.modelled || headBytes > MAX_HEAD_BYTES - HEAD_SLACK) {
    return expectation;
  }
  if (violations.length === 0) {
    // A valid request is refused only for what the handler finds in the values it was sent: a 400 names a query
    // parameter it was sent (a cursor conflict, a cursor that names no key), a 404 an ID that names no key of the
    // caller's organization.
    const own = caller === 'own' ? OWN_IDS : caller === 'other' ? OTHER_IDS : [];
    const ids = operation.parameters
      .filter((p) => p.in === 'path')
      .map((p) => strictDecode(matched?.values[p.name] ?? '', false));
    const namesOwnKeys = ids.length > 0 && ids.every((id) => own.some((name) => bindings[name] === id));
    const successes = operation.statuses.filter((status) => status >= 200 && status < 300);
    const statuses = [...successes, 429, ...(query.size > 0 ? [400] : []), ...(namesOwnKeys ? [] : [404])];
    return {
      ...expectation,
      exact: {
        statuses: statuses.filter((status) => operation.statuses.includes(status)),
        prefixes: [...query.keys()],
        why: namesOwnKeys ? "a request the spec accepts, for a key of the caller's" : 'a request the spec accepts',
      },
    };
  }
  const statuses = [...new Set([...violations.flatMap((v) => v.statuses), 429])];
  const [only] = violations;
  return {
    ...expectation,
    exact: {
      statuses,
      prefixes: violations.length === 1 && only ? only.prefixes : [],
      why: violations.map((v) => v.reason).join('; '),
    },
  };
}
