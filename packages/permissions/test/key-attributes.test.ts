import { describe, expect, it } from 'vitest';
import { metadataProblem, permissionsProblem } from '../src/index.js';
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
