import { describe, expect, it } from 'vitest';
import { metadataNumberProblem, metadataProblem, permissionsProblem } from '../src/index.js';
import { jsonDepth, utf8ByteLength } from '../src/json-measures.js';

/** `{"k":"…"}` with `value` inside: 8 bytes of JSON around the string's own. */
function withString(value: string): Record<string, string> {
  return { k: value };
}

/** An object `levels` deep: `{}` is 1, `{"a":{}}` is 2. */
function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) {
    value = { a: value };
  }
  return value;
}

describe('permissionsProblem', () => {
  it.each([
    [[]],
    [['documents.read', 'documents.*', '*']],
    [Array.from({ length: 100 }, (_, i) => `p${i}`)],
    [['a'.repeat(128)]],
  ])('accepts %j', (value) => {
    expect(permissionsProblem(value)).toBeUndefined();
  });

  it.each([
    [Array.from({ length: 101 }, (_, i) => `p${i}`), 'permissions: more than 100 names'],
    [['a', 'b', 'Docs.read'], 'permissions[2]: "Docs.read" is not a permission name'],
    [['documents.read', 'a', 'b', 'documents.read'], 'permissions[3]: "documents.read" is listed twice'],
    [['a.*', 'a.*.b'], 'permissions[1]: "a.*.b" is not a permission name'],
    [['a'.repeat(129)], `permissions[0]: "${'a'.repeat(60)}…" is not a permission name`],
    [[1], 'permissions[0]: 1 is not a permission name'],
    [[null], 'permissions[0]: null is not a permission name'],
    [[['a']], 'permissions[0]: an array is not a permission name'],
    [[{}], 'permissions[0]: an object is not a permission name'],
    ['documents.read', 'permissions: must be an array of permission names'],
    [null, 'permissions: must be an array of permission names'],
    [{ 0: 'a' }, 'permissions: must be an array of permission names'],
    [['docs read'], 'permissions[0]: a string (not repeated here) is not a permission name'],
    [[`sk-api-${'Ab3dE'.repeat(8)}fGh`], 'permissions[0]: a string (not repeated here) is not a permission name'],
    [['a', `Xsk-adm-${'Ab3dE'.repeat(8)}fGh`], 'permissions[1]: a string (not repeated here) is not a permission name'],
  ])('refuses %j', (value, expected) => {
    expect(permissionsProblem(value)).toBe(expected);
  });
});

/** The reason a number of metadata is refused, after the name of where it is. */
const NUMBER_RULE = 'a number must be finite and within ±9007199254740991 (2^53 − 1); send larger ones as strings';

describe('metadataProblem on numbers', () => {
  it.each([
    ['the largest', '{"n": 9007199254740991}'],
    ['the smallest', '{"n": -9007199254740991}'],
    ['fractions', '{"n": 0.1, "m": 1.5e-300, "k": -2.25}'],
    ['-0, which comes back as 0, the same number', '{"n": -0}'],
    ['exponents within the bounds', '{"n": 1e15, "m": 9.007199254740991e15}'],
  ])('accepts %s', (_, json) => {
    expect(metadataProblem(JSON.parse(json))).toBeUndefined();
  });

  it.each([
    ['1e400, which JSON.parse reads as Infinity', '{"n": 1e400}', 'metadata.n'],
    ['-1e400', '{"n": -1e400}', 'metadata.n'],
    ['2^53 + 1, which JSON.parse reads as 2^53', '{"id": 9007199254740993}', 'metadata.id'],
    ['2^53 itself', '{"id": 9007199254740992}', 'metadata.id'],
    ['-(2^53)', '{"id": -9007199254740992}', 'metadata.id'],
    ['a large number in exponent form', '{"n": 1e300}', 'metadata.n'],
    ['a number deep inside', '{"a": {"limits": [1, 2, {"rps": 1e999}]}}', 'metadata.a.limits[2].rps'],
    ['the first of several, in order', '{"ok": 1, "first": 1e400, "second": 1e400}', 'metadata.first'],
    ['a number under a key that may not be repeated', '{"a b": {"c": 1e400}}', 'metadata'],
    ["a number under a key of a secret's form", `{"sk-api-${'Ab3dE'.repeat(8)}fGh": 1e400}`, 'metadata'],
  ])('refuses %s, naming where it is', (_, json, where) => {
    expect(metadataProblem(JSON.parse(json))).toBe(`${where}: ${NUMBER_RULE}`);
  });

  it('refuses NaN and Infinity given as values, not parsed', () => {
    expect(metadataProblem({ n: Number.NaN })).toBe(`metadata.n: ${NUMBER_RULE}`);
    expect(metadataProblem({ list: [Number.POSITIVE_INFINITY] })).toBe(`metadata.list[0]: ${NUMBER_RULE}`);
  });

  it('finds a number at any depth without overflowing the stack (the CLI checks numbers before any bound)', () => {
    const deep = nestedObject(1_000_000);
    let innermost = deep;
    while (innermost.a) {
      innermost = innermost.a as Record<string, unknown>;
    }
    innermost.n = Number.NEGATIVE_INFINITY;

    expect(metadataNumberProblem({ 'a b': deep })).toBe(`metadata: ${NUMBER_RULE}`);
    expect(metadataNumberProblem({ ok: deep.a })).toBe(`metadata.ok${'.a'.repeat(999_998)}.n: ${NUMBER_RULE}`);
  });

  it('reports the size and the depth before the numbers', () => {
    expect(metadataProblem({ n: Number.POSITIVE_INFINITY, ...withString('x'.repeat(4089)) })).toMatch(
      /^metadata: \d+ bytes as JSON/,
    );
    expect(metadataProblem({ n: Number.POSITIVE_INFINITY, deep: nestedObject(5) })).toBe(
      'metadata: nested 6 levels deep, at most 5',
    );
  });
});

describe('metadataProblem', () => {
  it.each([
    [{}],
    [{ owner: 'team-billing', plan: 'enterprise' }],
    [withString('x'.repeat(4088))],
    [withString('é'.repeat(2044))],
    [withString('😀'.repeat(1022))],
    [withString('"'.repeat(2044))],
    [nestedObject(5)],
    [{ a: [[[[1]]]] }],
    [{ a: '[[[[[[{{{{{{' }],
    [{ a: '\\"[[[[[[[[' }],
    [Object.assign(Object.create(null), { a: 1 })],
  ])('accepts %j', (value) => {
    expect(metadataProblem(value)).toBeUndefined();
  });

  it.each([
    [withString('x'.repeat(4089)), 'metadata: 4097 bytes as JSON, at most 4096'],
    [withString('é'.repeat(2045)), 'metadata: 4098 bytes as JSON, at most 4096'],
    [withString(`${'😀'.repeat(1022)}x`), 'metadata: 4097 bytes as JSON, at most 4096'],
    [withString('€'.repeat(2000)), 'metadata: 6008 bytes as JSON, at most 4096'],
    [withString('"'.repeat(2045)), 'metadata: 4098 bytes as JSON, at most 4096'],
    [nestedObject(6), 'metadata: nested 6 levels deep, at most 5'],
    [{ a: [[[[[1]]]]] }, 'metadata: nested 6 levels deep, at most 5'],
    [{ a: [[[[[[[1]]]]]]] }, 'metadata: nested 8 levels deep, at most 5'],
  ])('refuses %j', (value, expected) => {
    expect(metadataProblem(value)).toBe(expected);
  });

  it.each([null, [], [{}], 'owner', 1, true, undefined, new Date(0), new Map([['a', 1]])])(
    'refuses %j as not a JSON object',
    (value) => {
      expect(metadataProblem(value)).toBe('metadata: must be a JSON object');
    },
  );

  it('refuses an object that writes itself as something else', () => {
    expect(metadataProblem({ toJSON: () => [1] })).toBe('metadata: must be a JSON object');
  });

  it('refuses what JSON cannot write', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;

    expect(metadataProblem(cyclic)).toBe('metadata: cannot be written as JSON');
    expect(metadataProblem({ a: 1n })).toBe('metadata: cannot be written as JSON');
  });

  it('handles "__proto__" as an ordinary key', () => {
    const shallow: unknown = JSON.parse('{"__proto__": 1}');
    const deep: unknown = JSON.parse('{"__proto__": {"a": {"b": {"c": {"d": {}}}}}}');

    expect(metadataProblem(shallow)).toBeUndefined();
    expect(Object.getPrototypeOf(shallow)).toBe(Object.prototype);
    expect(metadataProblem(deep)).toBe('metadata: nested 6 levels deep, at most 5');
  });

  it('answers for a hostile, deeply nested value without overflowing the stack', () => {
    const problem = metadataProblem(nestedObject(1_000_000));

    expect(problem).toBe('metadata: nested too deeply, at most 5 levels');
  });
});

describe('utf8ByteLength', () => {
  it.each(['', 'plain', 'é', '€uro', '😀 and 😀', '\ud800 lone', 'lone \udc00', 'x\u07ff\u0800'])(
    'agrees with TextEncoder on %j',
    (text) => {
      expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
    },
  );
});

describe('jsonDepth', () => {
  it.each([
    ['{}', 1],
    ['{"a":{"b":[1]}}', 3],
    ['[[],[[]]]', 3],
    ['{"a":"}}}{{{[[["}', 1],
    ['{"a":"\\"{{"}', 1],
    ['1', 0],
  ])('measures %s as %i', (json, expected) => {
    expect(jsonDepth(json)).toBe(expected);
  });
});
