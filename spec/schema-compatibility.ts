/**
 * Compares one JSON Schema of a published document with the same schema of the current document, the way the
 * versioning policy (openapi.yaml, "Versioning") reads it: what a request accepts may only grow, what a response holds
 * may only shrink, except that a response may gain fields.
 */
import { patternAcceptsAll } from './pattern-inclusion.js';

/** A request schema may accept more than before; a response schema may produce less (plus new fields). */
export type Direction = 'request' | 'response';

/** One change the policy forbids: where it is, and what changed. */
export interface BreakingChange {
  where: string;
  change: string;
}

type Schema = Record<string, unknown>;

/** Both documents, so that each side's `$ref`s resolve in its own. */
export interface ComparedDocuments {
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const show = (value: unknown): string => (value === undefined ? 'none' : JSON.stringify(value));

/** The node a local reference points at (`#/components/schemas/ApiKey`), following references to references. */
export function dereference(node: unknown, document: Record<string, unknown>): unknown {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 32) {
      throw new Error(`a chain of references does not end: ${current.$ref}`);
    }
    let target: unknown = document;
    for (const part of current.$ref.replace(/^#\//, '').split('/')) {
      target = isObject(target) ? target[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
    }
    if (target === undefined) {
      throw new Error(`${current.$ref} does not exist`);
    }
    current = target;
  }
  return current;
}

/** A schema with its `allOf` members folded in: their properties and required names join its own. */
function withAllOf(schema: Schema, document: Record<string, unknown>): Schema {
  const { allOf, ...own } = schema;
  if (!Array.isArray(allOf)) {
    return schema;
  }
  const merged: Schema = { ...own };
  for (const member of allOf) {
    const part = withAllOf(dereference(member, document) as Schema, document);
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties' && isObject(value)) {
        merged.properties = { ...value, ...(isObject(merged.properties) ? merged.properties : {}) };
      } else if (key === 'required' && Array.isArray(value)) {
        merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
      } else if (!(key in merged)) {
        merged[key] = value;
      }
    }
  }
  return merged;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  return typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
}

const hasType = (value: unknown, type: string): boolean =>
  jsonTypeOf(value) === type || (type === 'number' && typeof value === 'number');

/** One type a schema allows, with its constraints; `key` pairs it with its counterpart in the other document. */
interface Alternative {
  key: string;
  schema: Schema;
}

/**
 * The alternatives a schema allows: one per member of `anyOf`/`oneOf` and per entry of a `type` list, each with the
 * constraints that apply to it. An object alternative whose `type` property has one value is keyed by that value, so
 * that the variants of a union pair up by what they are, not by their order.
 */
function alternativesOf(node: unknown, document: Record<string, unknown>): Alternative[] {
  const schema = withAllOf(dereference(node, document) as Schema, document);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    const { anyOf: _any, oneOf: _one, ...shared } = schema;
    return union.flatMap((member) =>
      alternativesOf({ ...shared, ...(dereference(member, document) as Schema) }, document),
    );
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'any')];
  return types.map((type) => {
    const narrowed: Schema = { ...schema, type };
    if (Array.isArray(schema.enum)) {
      narrowed.enum = schema.enum.filter((value) => type === 'any' || hasType(value, type));
    }
    const tag = isObject(narrowed.properties) ? valuesOf(narrowed.properties.type as Schema) : undefined;
    return { key: tag?.length === 1 ? `${type} ${show(tag[0])}` : String(type), schema: narrowed };
  });
}

/** The values a schema allows when it lists them (`enum`, `const`), or undefined. */
function valuesOf(schema: Schema | undefined): unknown[] | undefined {
  if (!isObject(schema)) {
    return undefined;
  }
  if ('const' in schema) {
    return [schema.const];
  }
  return Array.isArray(schema.enum) ? schema.enum : undefined;
}

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'];
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'];
/** Keywords that restrict values when present: a request may drop them, a response may add them. */
const RESTRICTIONS = ['pattern', 'format', 'multipleOf', 'uniqueItems', 'contentEncoding', 'contentMediaType'];

/** The extension naming response values that only a request using a new input can get (see optedIn). */
const OPT_IN_VALUES = 'x-opt-in-values';

/**
 * The response values of `after` that answer only a new optional input: each listed in its `x-opt-in-values` with
 * that input (`Schema.property`), which the published document does not have, so no client written against it can
 * send it and receive the value.
 */
function optedIn(after: Schema, published: Record<string, unknown>): unknown[] {
  const listed = isObject(after[OPT_IN_VALUES]) ? after[OPT_IN_VALUES] : {};
  const schemas = isObject(published.components) ? published.components.schemas : undefined;
  return Object.entries(listed)
    .filter(([, input]) => {
      const [schema, property] = String(input).split('.');
      const before = isObject(schemas) ? schemas[schema ?? ''] : undefined;
      return !(
        isObject(before) &&
        isObject(before.properties) &&
        property !== undefined &&
        property in before.properties
      );
    })
    .map(([value]) => value);
}

/**
 * Whether a changed `pattern` changed as the policy allows, proven on both patterns: a request's accepts every
 * string the published one did, a response's produces none that the published one did not.
 */
function patternChangeAllowed(keyword: string, from: unknown, to: unknown, direction: Direction): boolean {
  if (keyword !== 'pattern' || typeof from !== 'string' || typeof to !== 'string') {
    return false;
  }
  return direction === 'request' ? patternAcceptsAll(to, from) : patternAcceptsAll(from, to);
}

/** Compares the constraints of two alternatives of the same type (enum, bounds, restrictions, default, extensions). */
function constraintChanges(
  before: Schema,
  after: Schema,
  direction: Direction,
  where: string,
  documents: ComparedDocuments,
): BreakingChange[] {
  const found: BreakingChange[] = [];
  const add = (change: string) => found.push({ where, change });
  const [was, is] = [valuesOf(before), valuesOf(after)];
  if (direction === 'request' && is !== undefined) {
    const dropped = (was ?? [undefined]).filter((value) => !is.some((kept) => same(kept, value)));
    if (dropped.length > 0) {
      add(`no longer accepts ${was ? dropped.map(show).join(', ') : 'any value'}: only ${is.map(show).join(', ')}`);
    }
  }
  if (direction === 'response' && was !== undefined) {
    const allowed = [...was, ...optedIn(after, documents.before)];
    const added = (is ?? [undefined]).filter((value) => !allowed.some((known) => same(known, value)));
    if (added.length > 0) {
      add(`may now hold ${is ? added.map(show).join(', ') : 'any value'}, beyond ${was.map(show).join(', ')}`);
    }
  }
  for (const [bounds, tighter] of [
    [LOWER_BOUNDS, (a: number, b: number) => a > b],
    [UPPER_BOUNDS, (a: number, b: number) => a < b],
  ] as const) {
    for (const keyword of bounds) {
      const [from, to] = [before[keyword] as number | undefined, after[keyword] as number | undefined];
      const narrowed = to !== undefined && (from === undefined || tighter(to, from));
      const widened = from !== undefined && (to === undefined || tighter(from, to));
      if ((direction === 'request' && narrowed) || (direction === 'response' && widened)) {
        add(`${keyword} changed from ${show(from)} to ${show(to)}`);
      }
    }
  }
  for (const keyword of RESTRICTIONS) {
    const [from, to] = [before[keyword] === false ? undefined : before[keyword], after[keyword]];
    const restricts = to === false ? undefined : to;
    const changed = !same(from, restricts) && !patternChangeAllowed(keyword, from, restricts, direction);
    if (
      changed &&
      ((direction === 'request' && restricts !== undefined) || (direction === 'response' && from !== undefined))
    ) {
      add(`${keyword} changed from ${show(from)} to ${show(restricts)}`);
    }
  }
  if (direction === 'request' && !same(before.default, after.default)) {
    add(`default changed from ${show(before.default)} to ${show(after.default)}`);
  }
  found.push(...extensionChanges(before, after, where));
  return found;
}

/** Whether an extension's change only adds entries to an `x-opt-in-values` map (values checked by optedIn). */
function onlyAddsOptIns(key: string, before: unknown, after: unknown): boolean {
  const was = before === undefined ? {} : before;
  return (
    key === OPT_IN_VALUES &&
    isObject(was) &&
    isObject(after) &&
    Object.entries(was).every(([value, input]) => same(after[value], input))
  );
}

/**
 * Whether an extension's change only makes an operation count against the caller's rate limit: `x-rate-limited`
 * from `false` to absent (counted, the default). Every operation documents `429`, which a client must handle already;
 * the way back, an operation no longer counted, would change what an operator's limits mean.
 */
function onlyStartsCounting(key: string, before: unknown, after: unknown): boolean {
  return key === 'x-rate-limited' && before === false && (after === undefined || after === true);
}

/**
 * Any change to an `x-` extension: the meaning it gives cannot be compared, so it must not change. An
 * `x-opt-in-values` may gain entries: what they allow is checked with the values themselves.
 */
export function extensionChanges(before: Schema, after: Schema, where: string): BreakingChange[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)].filter((key) => key.startsWith('x-')));
  return [...keys]
    .filter(
      (key) =>
        !same(before[key], after[key]) &&
        !onlyAddsOptIns(key, before[key], after[key]) &&
        !onlyStartsCounting(key, before[key], after[key]),
    )
    .map((key) => ({ where, change: `${key} changed from ${show(before[key])} to ${show(after[key])}` }));
}

/** Compares the fields of two object alternatives: removed, required and (in requests) unknown ones. */
function objectChanges(
  before: Schema,
  after: Schema,
  direction: Direction,
  where: string,
  documents: ComparedDocuments,
  comparing: Set<string>,
): BreakingChange[] {
  const found: BreakingChange[] = [];
  const was = isObject(before.properties) ? before.properties : {};
  const is = isObject(after.properties) ? after.properties : {};
  const wasRequired = new Set(Array.isArray(before.required) ? (before.required as string[]) : []);
  const isRequired = new Set(Array.isArray(after.required) ? (after.required as string[]) : []);
  for (const [name, schema] of Object.entries(was)) {
    if (!(name in is)) {
      found.push({ where: `${where}.${name}`, change: 'removed' });
    } else {
      found.push(...compareSchemas(schema, is[name], direction, `${where}.${name}`, documents, comparing));
    }
  }
  for (const name of isRequired) {
    if (direction === 'request' && !wasRequired.has(name)) {
      found.push({ where: `${where}.${name}`, change: 'now required' });
    }
  }
  for (const name of wasRequired) {
    if (direction === 'response' && name in is && !isRequired.has(name)) {
      found.push({ where: `${where}.${name}`, change: 'may now be missing (no longer required)' });
    }
  }
  if (direction === 'request' && before.additionalProperties !== false && after.additionalProperties === false) {
    found.push({ where, change: 'no longer accepts fields it does not name' });
  }
  return found;
}

/** The change between the schemas of the same place in two documents, as `direction` allows it. */
export function compareSchemas(
  before: unknown,
  after: unknown,
  direction: Direction,
  where: string,
  documents: ComparedDocuments,
  comparing: Set<string> = new Set(),
): BreakingChange[] {
  // A recursive schema meets itself again: the pair is already being compared further up.
  const pair = isObject(before) && isObject(after) ? `${before.$ref}|${after.$ref}` : undefined;
  if (pair !== undefined && pair !== 'undefined|undefined') {
    if (comparing.has(pair)) {
      return [];
    }
    comparing.add(pair);
  }
  const found: BreakingChange[] = [];
  const olds = alternativesOf(before, documents.before);
  const news = alternativesOf(after, documents.after);
  // Responses: every value now produced must have been possible. Requests: every value once accepted still is.
  const [required, offered] = direction === 'response' ? [news, olds] : [olds, news];
  const unpaired = [...offered];
  for (const needed of required) {
    const index = unpaired.findIndex((candidate) => candidate.key === needed.key);
    const match = index === -1 ? offered.find((candidate) => candidate.key === 'any') : unpaired.splice(index, 1)[0];
    if (!match) {
      const change = direction === 'response' ? `may now be ${needed.key}` : `no longer accepts ${needed.key}`;
      found.push({ where, change });
      continue;
    }
    const [old, current] = direction === 'response' ? [match.schema, needed.schema] : [needed.schema, match.schema];
    found.push(...constraintChanges(old, current, direction, where, documents));
    if (current.type === 'object') {
      found.push(...objectChanges(old, current, direction, where, documents, comparing));
    }
    if (current.type === 'array' && (old.items !== undefined || current.items !== undefined)) {
      found.push(
        ...compareSchemas(old.items ?? {}, current.items ?? {}, direction, `${where}[]`, documents, comparing),
      );
    }
  }
  if (pair !== undefined) {
    comparing.delete(pair);
  }
  return found;
}
