/**
 * The reasons the spec gives to refuse a request's inputs, each with the statuses and message prefixes it allows:
 * the credential and version headers, the query, and the body.
 */
import { isUtf8 } from 'node:buffer';
import { quotable } from '@apikeys/permissions';
import { HEADER_ALIASES } from './drafts.js';
import { parameterTextConforms } from './parameter-values.js';
import {
  type Bindings,
  type Organization,
  placeholderOf,
  SECRET_PLACEHOLDERS,
  SECRETS,
  type SecretPlaceholder,
} from './placeholders.js';
import { bodyAsRead, type FuzzRequest } from './request.js';
import { strictDecode } from './request-reading.js';
import { conforms, holdsLoneSurrogate } from './schema-values.js';
import type { OperationModel, SpecModel } from './spec-model.js';

/** Methods whose body the server reads (for any path: before it knows the route). */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** One reason the spec gives to refuse a request, with the statuses and message prefixes it allows. */
export interface Violation {
  reason: string;
  statuses: number[];
  /** The message must start with one of these followed by `:` or `.` (an empty list: any message). */
  prefixes: string[];
  /** A rule of the spec's prose (`semantics.ts`), whose reason names no value: counted for the coverage check. */
  rule?: true;
}

/** The message prefixes that name a parameter or field: its name when it may be quoted, else where it was. */
export function namePrefixes(name: string, location: string): string[] {
  const base = name.split(/[[.]/)[0] ?? '';
  return [
    ...(quotable(name, 'name') ? [name] : []),
    ...(base !== name && quotable(base, 'name') ? [base] : []),
    location,
  ];
}

/** A reason to refuse a request. */
export function invalid(reason: string, statuses: number[], prefixes: string[]): Violation {
  return { reason, statuses, prefixes };
}

/** RFC 3986 reserved characters: without `allowReserved`, a query value must percent-encode them (OpenAPI 3.1). */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

/**
 * The reasons to refuse the query of an operation: encoding, repeats (but of an array parameter, given once per
 * item), unknown names, invalid values. `decoded` receives the values of each name, except the empty values that
 * mean an absent parameter (`allowEmptyValue`).
 */
export function queryViolations(
  operation: OperationModel,
  rawQuery: string | undefined,
  decoded: Map<string, string[]>,
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
    const parameter = declared.get(name);
    const array = parameter?.schema.type === 'array';
    if (!(parameter?.allowEmptyValue && value === '')) {
      decoded.set(name, [...(decoded.get(name) ?? []), value]);
    }
    if (seen.has(name) && !array) {
      found.push(invalid(`query ${name}: repeated`, [400], namePrefixes(name, 'query')));
    } else if (!parameter) {
      // Names are exact: `type[]` is not `type`, and a refusal names it as sent (when it may be quoted).
      const shown = quotable(name, 'name') || quotable(name, 'bracketedName');
      found.push(invalid(`query ${name}: unknown parameter`, [400], [...(shown ? [name] : []), 'query']));
    } else if (!parameter.allowReserved && RESERVED.test(equals === -1 ? '' : pair.slice(equals + 1))) {
      found.push(
        invalid(`query ${name}: a reserved character not percent-encoded`, [400], namePrefixes(name, 'query')),
      );
    } else if (parameter.allowEmptyValue && value === '') {
      // An empty value means no filter (from 2026-10-21; the first version has no such parameter).
    } else if (!parameterTextConforms(array ? (parameter.schema.items ?? {}) : parameter.schema, value)) {
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
    const count = parameter.schema.type === 'array' ? (decoded.get(parameter.name)?.length ?? 0) : 0;
    const { minItems = 0, maxItems = Number.POSITIVE_INFINITY } = parameter.schema;
    if (count > maxItems || (count > 0 && count < minItems)) {
      found.push(invalid(`query ${parameter.name}: ${count} items`, [400], namePrefixes(parameter.name, 'query')));
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

/** What the oracle finds in a body: certain refusals, refusals the spec leaves open, and the parsed body. */
export interface BodyReading {
  violations: Violation[];
  /** Reasons the spec neither requires nor forbids refusing for: their statuses are allowed beside a success. */
  possible: Violation[];
  parsed?: unknown;
}

/** The reasons to refuse a body, and the body as parsed when it is JSON. */
export function bodyViolations(
  operation: OperationModel,
  request: FuzzRequest,
  headers: Map<string, string>,
  bindings: Bindings,
  maxBodyBytes: number,
): BodyReading {
  const declared = operation.body;
  if (!declared || !BODY_METHODS.has(request.method)) {
    return { violations: [], possible: [] };
  }
  const malformed = request.framing.kind === 'malformed-chunk' ? request.framing.form : undefined;
  const read = bodyAsRead(request, bindings) ?? Buffer.alloc(0);
  if (!malformed && !declared.required && read.length === 0) {
    return emptyOptionalBody(headers, declared.mediaTypes);
  }
  // Encoding, size and media type are independent reasons: the spec gives none precedence over another.
  const found: Violation[] = [];
  const encoding = headers.get('content-encoding');
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    found.push(invalid(`content-encoding ${JSON.stringify(encoding)}`, [415], ['content-encoding']));
  }
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
  if (malformed) {
    // A body whose chunked coding is broken is unreadable: a 400 at once, unless its headers are refused first.
    found.push(invalid(`a chunked body with ${malformed}`, [400], []));
  }
  if (found.length > 0) {
    return { violations: found, possible: [] };
  }
  if (read.length === 0) {
    return { violations: [invalid('no body', [400], ['body'])], possible: [] };
  }
  if (!isUtf8(read)) {
    return { violations: [invalid('the body is not UTF-8', [400], ['body'])], possible: [] };
  }
  let parsed: unknown;
  try {
    // A UTF-8 byte order mark may be ignored (RFC 8259, section 8.1).
    parsed = JSON.parse(read.toString('utf8').replace(/^\ufeff/, ''));
  } catch {
    return { violations: [invalid('the body is not JSON', [400], ['body'])], possible: [] };
  }
  const fields = offendingFields(operation, parsed);
  const prefixes = [...fields.flatMap((field) => namePrefixes(field, 'body')), 'body'];
  if (holdsLoneSurrogate(parsed)) {
    return {
      violations: [invalid('a string holds an unpaired surrogate', [400], prefixes)],
      possible: [],
      parsed,
    };
  }
  if (!conforms(declared.schema, parsed)) {
    return {
      violations: [invalid(`the body breaks its schema (${fields.join(', ') || 'its type'})`, [400], prefixes)],
      possible: [],
      parsed,
    };
  }
  return { violations: [], possible: [], parsed };
}

/** An empty body where one is optional: no body at all, unless its headers say there is one the spec refuses. */
function emptyOptionalBody(headers: Map<string, string>, mediaTypes: string[]): BodyReading {
  const possible: Violation[] = [];
  const encoding = headers.get('content-encoding');
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    possible.push(invalid(`content-encoding ${JSON.stringify(encoding)} on no body`, [415], ['content-encoding']));
  }
  const contentType = headers.get('content-type');
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== undefined) {
    // A content type with zero bytes: no body, or an empty one, which is no JSON (400) or not JSON (415).
    possible.push(
      media !== undefined && mediaTypes.includes(media)
        ? invalid('an empty JSON body', [400], ['body'])
        : invalid(`content-type ${JSON.stringify(contentType)} on no body`, [415], ['content-type']),
    );
  }
  return { violations: [], possible };
}

/** Who calls: the fixture's admin or verifier key, where it was presented. */
export interface Caller {
  secret: SecretPlaceholder;
  kind: 'admin' | 'verifier';
  organization: Organization;
  placement: 'header' | 'bearer';
}

/**
 * The reasons to refuse a request's credential and version headers, and its caller when the credential is an
 * active admin or verifier key of the fixture. A verifier key calls only the operations whose security takes its
 * prefix: any other answers it 403.
 */
export function headerViolations(
  operation: OperationModel | undefined,
  model: SpecModel,
  headers: Map<string, string>,
  bindings: Bindings,
): { violations: Violation[]; caller?: Caller } {
  const found: Violation[] = [];
  if (operation?.public) {
    // A probe reads no header: neither a credential nor a version.
    return { violations: found };
  }
  // The credential comes in the credential header or, when that is absent or empty, as `Authorization: Bearer`.
  const inHeader = headers.get(model.credentialHeader) || undefined;
  const authorization = headers.get('authorization');
  const bearer = authorization === undefined ? undefined : /^bearer +(\S+)$/i.exec(authorization)?.[1];
  const credential = inHeader ?? bearer;
  const secret = credential === undefined ? undefined : placeholderOf(credential, SECRET_PLACEHOLDERS, bindings);
  const fact = secret === undefined ? undefined : SECRETS[secret];
  let caller: Caller | undefined;
  if (credential === undefined) {
    found.push(invalid(`${model.credentialHeader} missing`, [401], []));
  } else if (!secret || !fact) {
    found.push(invalid(`${model.credentialHeader} is no key of the fixture`, [401], []));
  } else if (fact.kind === 'api') {
    found.push(invalid(`${model.credentialHeader} holds a regular API key`, [403], []));
  } else if (!fact.active) {
    found.push(invalid(`${model.credentialHeader} holds a disabled ${fact.kind} key`, [401], []));
  } else {
    caller = { secret, kind: fact.kind, organization: fact.organization, placement: inHeader ? 'header' : 'bearer' };
    const prefix = /^sk-[a-z]+-/.exec(credential)?.[0] ?? '';
    if (operation && !operation.credentialPrefixes.includes(prefix)) {
      found.push(invalid(`a ${fact.kind} key, which ${operation.operationId} does not take`, [403], []));
    }
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
