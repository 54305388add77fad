/**
 * Values derived from the spec's schemas: valid and invalid JSON values for bodies, and valid and invalid text
 * for parameters; plus the independent check (Ajv) of whether a value conforms, which the oracle uses.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { type JsonSchema, typesOf } from './spec-model.js';

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
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

// With the `u` flag a surrogate pair is one code point, so only an unpaired surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;

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
  strings: readonly string[];
}

/** Arbitraries are built once per schema: building one samples it, and chains would rebuild it for every value. */
function memoized<T>(build: (schema: JsonSchema, pools: ValuePools) => fc.Arbitrary<T>) {
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
  if (pattern && !mostlyMatches(generated, pattern)) {
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
function validInteger(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  const edges = [min, max, ...(typeof schema.default === 'number' ? [schema.default] : [])];
  return fc.oneof(fc.constantFrom(...edges), fc.integer({ min, max }));
}

/** Valid JSON values for a schema (objects as `Entries`, so that they print and serialize in order). */
export const validValue = memoized((schema, pools) => buildValidValue(schema, pools, 0));

function buildValidValue(schema: JsonSchema, pools: ValuePools, depth: number): fc.Arbitrary<unknown> {
  if (schema.enum) {
    return fc.constantFrom(...schema.enum);
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
const WRONG_TYPES: readonly unknown[] = [
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

/** Strings that break a string schema: lengths just out of bounds, NUL, lone surrogates, near-miss enum values. */
function invalidStrings(schema: JsonSchema): string[] {
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
  if (types.includes('object') && depth < 3) {
    arbitraries.push(...invalidObjects(schema, pools, depth));
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

/** Whether a parameter's text (decoded) is valid for its schema, taken exactly as the contract writes it. */
export function parameterTextConforms(schema: JsonSchema, text: string): boolean {
  if (LONE_SURROGATE.test(text)) {
    return false;
  }
  return typesOf(schema).some((type) => {
    switch (type) {
      case 'integer':
        // Plain decimal digits, no sign or leading zero: the only integer form the contract accepts.
        return /^(?:0|[1-9][0-9]*)$/.test(text) && Number.isSafeInteger(Number(text)) && conforms(schema, Number(text));
      case 'number':
        return /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/.test(text) && conforms(schema, Number(text));
      case 'boolean':
        return (text === 'true' || text === 'false') && conforms(schema, text === 'true');
      case 'null':
        return false;
      case 'string':
        return conforms(schema, text);
      default:
        return false;
    }
  });
}

/** Forms of a whole number that the contract refuses, though a lenient parser reads them as `value`. */
export function lenientIntegerForms(value: number): string[] {
  const text = String(value);
  return [
    `+${text}`,
    `0${text}`,
    `00${text}`,
    `${text}.0`,
    `${text}.`,
    `${text}e0`,
    `${value / 10}e1`,
    `${text}E0`,
    `0x${value.toString(16)}`,
    `0X${value.toString(16).toUpperCase()}`,
    `0o${value.toString(8)}`,
    `0b${value.toString(2)}`,
    ` ${text}`,
    `${text} `,
    `\t${text}`,
    `${text}\n`,
    `${text}\u0000`,
    `${text}_0`,
    `${text.slice(0, 1)},${text.slice(1) || '0'}`,
    `[${text}]`,
    `${text}\u200b`,
    [...text].map((digit) => String.fromCodePoint(0xff10 + Number(digit))).join(''),
    [...text].map((digit) => String.fromCodePoint(0x0660 + Number(digit))).join(''),
    `-${text}`,
    `-0`,
    '',
  ];
}

/** Integer texts out of the schema's range or beyond exact doubles: `max + 1`, 2^53 + 1, 400 nines, infinities. */
export function outOfRangeIntegerForms(schema: JsonSchema): string[] {
  return [
    ...(schema.minimum === undefined ? [] : [String(schema.minimum - 1)]),
    ...(schema.maximum === undefined ? [] : [String(schema.maximum + 1), String(schema.maximum * 1000)]),
    '9007199254740992',
    '9007199254740993',
    '18446744073709551616',
    '9'.repeat(400),
    '1e400',
    'Infinity',
    '-Infinity',
    'NaN',
    'null',
    'true',
    'undefined',
  ];
}

/** Valid text for a parameter: what a client sends for a valid value. */
export const validParameterText = memoized(buildValidParameterText);

function buildValidParameterText(schema: JsonSchema, pools: ValuePools): fc.Arbitrary<string> {
  return validValue(schema, pools).map((value) => (typeof value === 'string' ? value : jsonText(value)));
}

/** Text that a parameter's schema refuses: the hostile forms of its type, out-of-range and malformed values. */
export const invalidParameterText = memoized(buildInvalidParameterText);

function buildInvalidParameterText(schema: JsonSchema, pools: ValuePools): fc.Arbitrary<string> {
  const types = typesOf(schema);
  const candidates: fc.Arbitrary<string>[] = [];
  if (types.includes('integer') || types.includes('number')) {
    candidates.push(
      validInteger(schema).chain((value) => fc.constantFrom(...lenientIntegerForms(value))),
      fc.constantFrom(...outOfRangeIntegerForms(schema)),
    );
  }
  candidates.push(
    fc.constantFrom(...invalidStrings(schema)),
    fc.constantFrom(...WRONG_TYPES.map((value) => (typeof value === 'string' ? value : jsonText(value)))),
  );
  const known = pools.strings;
  if (known.length > 0) {
    candidates.push(fc.constantFrom(...known));
  }
  return fc.oneof(...candidates).filter((text) => !parameterTextConforms(schema, text));
}

/**
 * The bytes of a text as UTF-8, except that unpaired surrogates are written as their 3-byte (WTF-8) form, which
 * is not UTF-8: the only way to send one in a URL.
 */
export function wtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const code = text.codePointAt(index) ?? 0;
    if (code > 0xffff) {
      index += 1;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
    }
  }
  return Buffer.from(bytes);
}
