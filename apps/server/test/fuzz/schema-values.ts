/**
 * Values derived from the spec's schemas: valid and invalid JSON values for bodies, and valid and invalid text
 * for parameters; plus the independent check (Ajv) of whether a value conforms, which the oracle uses.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { BAD_DATETIMES, instantOf, validDateTime } from './datetimes.js';
import { type JsonSchema, typesOf } from './spec-model.js';

// `date-time` is read as the fuzzer reads it (`instantOf`): a datetime that names an instant.
const ajv = new Ajv2020({
  strict: false,
  allErrors: false,
  formats: { 'date-time': { type: 'string', validate: (text: string) => instantOf(text) !== undefined } },
});
const validators = new WeakMap<JsonSchema, ValidateFunction>();

/** Whether `value` conforms to `schema` (maxLength counts code points, as the spec's validator does). */
export function conforms(schema: JsonSchema, value: unknown): boolean {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate(value) as boolean;
}

/** An unpaired surrogate: with the `u` flag a surrogate pair is one code point, so only a lone one matches. */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether a string, or any key or string inside a JSON value, holds an unpaired surrogate: not valid Unicode.
 * Iterative, so that a body nested a million deep cannot overflow the fuzzer's own stack.
 */
export function holdsLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (LONE_SURROGATE.test(next)) {
        return true;
      }
    } else if (next !== null && typeof next === 'object') {
      for (const [key, inner] of Object.entries(next)) {
        if (LONE_SURROGATE.test(key)) {
          return true;
        }
        pending.push(inner);
      }
    }
  }
  return false;
}

/** A JSON number written as is (`1e400`, `-0`, `9007199254740993`), which JSON.stringify cannot produce. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** A JSON object written from its entries, in order: keys may repeat, and `__proto__` is an ordinary key. */
export class Entries {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

/** The JSON text of a generated value. Strings are escaped as JSON.stringify does (`"\ud800"` for a lone surrogate). */
export function jsonText(value: unknown): string {
  if (value instanceof RawNumber) {
    return value.text;
  }
  if (value instanceof Entries) {
    return `{${value.entries.map(([key, inner]) => `${JSON.stringify(key)}:${jsonText(inner)}`).join(',')}}`;
  }
  if (Array.isArray(value)) {
    return `[${value.map(jsonText).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    return jsonText(new Entries(Object.entries(value)));
  }
  return JSON.stringify(value) ?? 'null';
}

/** Strings of every kind a name may legitimately hold: they must be stored and returned code point for code point. */
export const UNICODE_EDGE_STRINGS = [
  'é',
  'e\u0301',
  '\u212b',
  '\u00c5',
  '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}',
  '\u202eevil\u202c',
  '\ufeffbom',
  'line\u2028separator\u2029',
  '\u0001control\u001f',
  'tab\tnew\nline\r',
  '\u007f',
  '\uffff\ufffe',
  '\u{10ffff}',
  '\u{e000}',
  '\ufb01',
  'ß',
  'İ',
  '𝕏😀',
  ' leading',
  'trailing ',
  ' ',
  '\u00a0',
  '\u3000',
  '<script>alert(1)</script>',
  "'; DROP TABLE api_keys; --",
  '%',
  '_',
  '%_%',
  '\\',
  '"',
  '{}',
  'null',
  '../../etc/passwd',
  // A log4j-style lookup: text a server must store as it is.
  `\${jndi:ldap://x}`,
] as const;

/** Values that the fuzzer knows (fixture IDs, placeholders), offered wherever a schema accepts them. */
export interface ValuePools {
  /** Values offered to every string schema that accepts them; never a secret (a name would echo it). */
  strings: readonly string[];
  /**
   * Values offered to a schema whose example starts with the key (`apikey_`, `sk-api-`): the fixture's IDs, and
   * its secrets for a field that takes one.
   */
  byPrefix: Readonly<Record<string, readonly string[]>>;
}

/** The ID or secret prefix of an example (`apikey_`, `wrkspc_`, `sk-api-`). */
export function examplePrefix(example: unknown): string | undefined {
  return typeof example === 'string' ? /^(?:[a-z]+_|sk-[a-z]+-)/.exec(example)?.[0] : undefined;
}

/** Arbitraries are built once per schema: building one samples it, and chains would rebuild it for every value. */
export function memoized<T>(build: (schema: JsonSchema, pools: ValuePools) => fc.Arbitrary<T>) {
  const cache = new WeakMap<JsonSchema, WeakMap<ValuePools, fc.Arbitrary<T>>>();
  return (schema: JsonSchema, pools: ValuePools): fc.Arbitrary<T> => {
    let byPools = cache.get(schema);
    if (!byPools) {
      byPools = new WeakMap();
      cache.set(schema, byPools);
    }
    let arbitrary = byPools.get(pools);
    if (!arbitrary) {
      arbitrary = build(schema, pools);
      byPools.set(pools, arbitrary);
    }
    return arbitrary;
  };
}

/** Whether a generator's strings mostly satisfy a pattern (then filtering is cheap), judged on a fixed sample. */
function mostlyMatches(candidates: fc.Arbitrary<string>, pattern: RegExp): boolean {
  const sample = fc.sample(candidates, { numRuns: 60, seed: 1 });
  return sample.filter((text) => pattern.test(text)).length >= sample.length / 2;
}

/** Valid strings for a string schema: boundary lengths, ASCII, graphemes, any code point, and the edge strings. */
export const validString = memoized(buildValidString);

function buildValidString(schema: JsonSchema, pools: ValuePools): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 64;
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
  const ok = (text: string) => conforms(schema, text) && !LONE_SURROGATE.test(text);
  const short = Math.max(min, Math.min(max, 24));
  const boundaries = [
    'a'.repeat(Math.max(min, 1)),
    'b'.repeat(max),
    '😀'.repeat(max),
    'é'.repeat(max),
    'e\u0301'.repeat(Math.floor(max / 2)),
  ];
  let generated: fc.Arbitrary<string> = fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: short }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: short }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: short }) },
    { weight: 2, arbitrary: fc.constantFrom(...UNICODE_EDGE_STRINGS) },
    { weight: 1, arbitrary: fc.constantFrom(...boundaries) },
  );
  if (schema.format === 'date-time') {
    generated = validDateTime(schema);
  } else if (pattern && !mostlyMatches(generated, pattern)) {
    generated = fc.stringMatching(pattern);
  }
  const known = pools.strings.filter(ok);
  const arbitraries = [{ weight: 8, arbitrary: generated.filter(ok) }];
  if (known.length > 0) {
    arbitraries.push({ weight: 4, arbitrary: fc.constantFrom(...known) });
  }
  return fc.oneof(...arbitraries);
}

/** Valid integers: the bounds, the default, and any value between. */
export function validInteger(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  const edges = [min, max, ...(typeof schema.default === 'number' ? [schema.default] : [])];
  return fc.oneof(fc.constantFrom(...edges), fc.integer({ min, max }));
}

/** Valid JSON values for a schema (objects as `Entries`, so that they print and serialize in order). */
export const validValue = memoized((schema, pools) => buildValidValue(schema, pools, 0));

/** A schema with the members of its `allOf` merged into it (its own keywords win). */
export function mergeAllOf(schema: JsonSchema): JsonSchema {
  if (!schema.allOf) {
    return schema;
  }
  const { allOf, ...own } = schema;
  return Object.assign({}, ...allOf.map(mergeAllOf), own) as JsonSchema;
}

/** The alternatives of a schema (`anyOf`, `oneOf`), each with its `allOf` merged; the schema itself if none. */
export function alternativesOf(schema: JsonSchema): JsonSchema[] {
  const merged = mergeAllOf(schema);
  const branches = merged.anyOf ?? merged.oneOf;
  return branches ? branches.flatMap(alternativesOf) : [merged];
}

function buildValidValue(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<unknown> {
  const generated = buildGeneratedValue(mergeAllOf(schema), pools, depth);
  const prefix = examplePrefix(schema.example);
  const known = prefix === undefined ? [] : (pools.byPrefix[prefix] ?? []).filter((value) => conforms(schema, value));
  return known.length === 0
    ? generated
    : fc.oneof({ weight: 1, arbitrary: generated }, { weight: 2, arbitrary: fc.constantFrom(...known) });
}

function buildGeneratedValue(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<unknown> {
  if (schema.enum) {
    return fc.constantFrom(...schema.enum);
  }
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    return fc
      .oneof(...branches.map((branch) => buildValidValue(branch, pools, depth + 1)))
      .filter((value) => conforms(schema, asParsed(value)));
  }
  const byType = typesOf(schema).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return validString(schema, pools);
      case 'integer':
        return validInteger(schema);
      case 'number':
        return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 4
          ? fc.constant([])
          : fc.array(buildValidValue(schema.items ?? {}, pools, depth + 1), {
              minLength: schema.minItems ?? 0,
              maxLength: Math.min(schema.maxItems ?? 3, 3),
            });
      default:
        return depth > 4 ? fc.constant(new Entries([])) : validObject(schema, pools, depth);
    }
  });
  return byType.length === 1 ? (byType[0] as fc.Arbitrary<unknown>) : fc.oneof(...byType);
}

function validObject(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<Entries> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const fields = properties.map(([name, property]) =>
    required.has(name)
      ? buildValidValue(property, pools, depth + 1).map((value) => [[name, value] as const])
      : fc
          .option(
            buildValidValue(property, pools, depth + 1).map((value) => [name, value] as const),
            { nil: undefined, freq: 3 },
          )
          .map((entry) => (entry === undefined ? [] : [entry])),
  );
  return fc.tuple(...fields).map((entries) => new Entries(entries.flat()));
}

/** Keys that no object of the spec declares, chosen to catch prototype pollution, echoes and lax matching. */
const ODD_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  '$ADMIN_KEY',
  '$OTHER_ADMIN_KEY',
  '$API_KEY_SECRET',
  '\ud800',
  'a\u0000b',
  'x'.repeat(300),
  '😀',
  'id',
  'type',
  'created_at',
  'organization_id',
  'secret_hash',
] as const;

/** Values no schema of the given types accepts; RawNumbers for numbers JSON.stringify cannot write. */
export const WRONG_TYPES: readonly unknown[] = [
  'text',
  '1',
  0,
  1,
  -1,
  1.5,
  true,
  false,
  null,
  [],
  new Entries([]),
  ['x'],
  new Entries([['a', 1]]),
  new RawNumber('1e400'),
  new RawNumber('-0'),
  new RawNumber('9007199254740993'),
  new RawNumber('1E3'),
];

/** The value a server reads from a generated value: JSON text parsed back. */
export function asParsed(value: unknown): unknown {
  return JSON.parse(jsonText(value));
}

/** Whether a generated value is refused by the spec: it breaks the schema or holds invalid Unicode. */
export function isInvalid(schema: JsonSchema, value: unknown): boolean {
  const parsed = asParsed(value);
  return !conforms(schema, parsed) || holdsLoneSurrogate(parsed);
}

/**
 * Strings that break a string schema: lengths just out of bounds, NUL, lone surrogates, near-miss enum values, and
 * for a datetime, the datetimes clients get wrong.
 */
export function invalidStrings(schema: JsonSchema): string[] {
  return [...new Set(alternativesOf(schema).flatMap(stringsBreaking))];
}

function stringsBreaking(schema: JsonSchema): string[] {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 64;
  const found = [
    'x'.repeat(Math.max(0, min - 1)),
    'c'.repeat(max + 1),
    '😀'.repeat(max + 1),
    'd'.repeat(max * 2),
    '\u0000',
    'a\u0000b',
    '\ud800',
    'a\udc00',
    '\udc00\ud800',
    `ok${'\udbff'}`,
  ];
  for (const value of schema.enum ?? []) {
    if (typeof value === 'string') {
      found.push(
        value.toUpperCase(),
        ` ${value}`,
        `${value} `,
        `${value}\u0000`,
        `${value}s`,
        value.slice(0, -1),
        `${value}\ud800`,
        'null',
        '',
      );
    }
  }
  if (schema.format === 'date-time') {
    found.push(...BAD_DATETIMES);
  }
  return found;
}

/** Values that break `schema`: wrong types, bounds, lengths, patterns, enums, unknown and missing fields. */
export const invalidValue = memoized((schema, pools) => buildInvalidValue(schema, pools, 0));

function buildInvalidValue(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<unknown> {
  const wrong = WRONG_TYPES.filter((value) => isInvalid(schema, value));
  const arbitraries: fc.Arbitrary<unknown>[] = [];
  if (wrong.length > 0) {
    arbitraries.push(fc.constantFrom(...wrong));
  }
  const types = typesOf(schema);
  if (types.includes('string') || schema.enum) {
    const strings = invalidStrings(schema).filter((value) => isInvalid(schema, value));
    if (strings.length > 0) {
      arbitraries.push(fc.constantFrom(...strings));
    }
  }
  if (types.includes('integer') || types.includes('number')) {
    const min = schema.minimum;
    const max = schema.maximum;
    const numbers = [
      ...(min === undefined ? [] : [min - 1, new RawNumber(`${min}.5`)]),
      ...(max === undefined ? [] : [max + 1, new RawNumber(`${max}e0`)]),
      0.5,
      new RawNumber('1e400'),
    ].filter((value) => isInvalid(schema, value));
    if (numbers.length > 0) {
      arbitraries.push(fc.constantFrom(...numbers));
    }
  }
  if (depth < 3) {
    for (const alternative of alternativesOf(schema)) {
      if (typesOf(alternative).includes('object') && alternative.properties) {
        arbitraries.push(...invalidObjects(alternative, pools, depth));
      }
    }
  }
  if (arbitraries.length === 0) {
    throw new Error(`no invalid value can be derived from ${JSON.stringify(schema)}`);
  }
  return fc.oneof(...arbitraries).filter((value) => isInvalid(schema, value));
}

function invalidObjects(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<unknown>[] {
  const base = validObject(schema, pools, depth);
  const properties = Object.entries(schema.properties ?? {});
  const declared = new Set(properties.map(([name]) => name));
  const found: fc.Arbitrary<unknown>[] = [];
  if (schema.additionalProperties === false) {
    const key = fc.oneof(
      fc.constantFrom(...ODD_KEYS),
      fc.stringMatching(/^[a-z_]{1,12}$/).filter((name) => !declared.has(name)),
      fc.constantFrom(...properties.map(([name]) => name.toUpperCase()), ...properties.map(([name]) => `${name} `)),
    );
    const value = fc.oneof(fc.constantFrom(...WRONG_TYPES), fc.constantFrom('$ADMIN_KEY', '$API_KEY_SECRET'));
    found.push(
      fc.tuple(base, key, value, fc.nat()).map(([object, name, inner, at]) => {
        const entries = [...object.entries];
        entries.splice(at % (entries.length + 1), 0, [name, inner]);
        return new Entries(entries);
      }),
    );
  }
  if (properties.length > 0) {
    const field = fc.constantFrom(...properties);
    found.push(
      fc
        .tuple(base, field)
        .chain(([object, [name, property]]) =>
          invalidValue(property, pools).map(
            (inner) => new Entries([...object.entries.filter(([key]) => key !== name), [name, inner]]),
          ),
        ),
    );
  }
  for (const name of schema.required ?? []) {
    found.push(base.map((object) => new Entries(object.entries.filter(([key]) => key !== name))));
  }
  return found;
}
