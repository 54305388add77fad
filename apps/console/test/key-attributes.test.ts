import { KEY_METADATA, PERMISSIONS } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import {
  changedAttributes,
  metadataText,
  permissionFilterProblem,
  permissionsText,
  readMetadata,
  readPermissions,
} from '../src/key-attributes.js';

// The rules themselves (names, limits, bytes, depth) are @apikeys/permissions' and tested there; these tests cover
// how the console reads its fields, and that each limit of the spec reaches the field's message.

/** An object nested `levels` deep, the object itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) {
    value = { a: value };
  }
  return value;
}

const names = (count: number) => Array.from({ length: count }, (_, index) => `p${index}`);

describe('the permissions field', () => {
  it('reads names one a line, or separated by commas or spaces, ignoring empty entries, in the order typed', () => {
    expect(readPermissions('documents.read\n\n  documents.write , billing.*,*\r\nadmin.users  ')).toEqual({
      value: ['documents.read', 'documents.write', 'billing.*', '*', 'admin.users'],
    });
    expect(readPermissions('  \n , ')).toEqual({ value: [] });
  });

  it('accepts as many names as the spec allows, up to the longest name', () => {
    expect(readPermissions(names(PERMISSIONS.maxItems).join('\n'))).toEqual({ value: names(PERMISSIONS.maxItems) });
    expect(readPermissions('a'.repeat(PERMISSIONS.nameMaxLength))).toEqual({
      value: ['a'.repeat(PERMISSIONS.nameMaxLength)],
    });
  });

  it.each([
    ['upper case', 'Documents.read'],
    ['an empty segment', 'documents..read'],
    ['a wildcard inside', 'documents.*.read'],
    ['a wildcard without a dot', 'documents*'],
  ])('refuses a name with %s, naming it', (_, name) => {
    expect(readPermissions(`documents.read\n${name}`)).toEqual({
      problem: `permissions[1]: ${JSON.stringify(name)} is not a permission name`,
    });
  });

  it('refuses a name over the longest, more names than the spec allows, and a name listed twice', () => {
    const long = 'a'.repeat(PERMISSIONS.nameMaxLength + 1);

    expect(readPermissions(long)).toEqual({ problem: expect.stringMatching(/^permissions\[0\]: "a+…" is not a/) });
    expect(readPermissions(names(PERMISSIONS.maxItems + 1).join(','))).toEqual({
      problem: `permissions: more than ${PERMISSIONS.maxItems} names`,
    });
    expect(readPermissions('a, b\na')).toEqual({ problem: 'permissions[2]: "a" is listed twice' });
  });

  it('shows permissions one a line, which it reads back', () => {
    const permissions = ['documents.read', 'documents.*'];

    expect(permissionsText(permissions)).toBe('documents.read\ndocuments.*');
    expect(readPermissions(permissionsText(permissions))).toEqual({ value: permissions });
  });
});

describe('the metadata field', () => {
  it('reads a JSON object, and an empty field as no metadata', () => {
    expect(readMetadata(' {"owner": "team-billing", "tier": 2} ')).toEqual({
      value: { owner: 'team-billing', tier: 2 },
    });
    expect(readMetadata('  \n')).toEqual({ value: {} });
  });

  it("says when the text is not JSON, with the parser's reason", () => {
    expect(readMetadata('{owner: "team-billing"}')).toEqual({
      problem: expect.stringMatching(/^metadata: not valid JSON \(.+\)$/),
    });
  });

  it('refuses JSON that is not an object', () => {
    for (const text of ['["team-billing"]', '"team-billing"', '3', 'null']) {
      expect(readMetadata(text), text).toEqual({ problem: 'metadata: must be a JSON object' });
    }
  });

  it('accepts an object up to the largest size in bytes and the deepest nesting, and refuses one past either', () => {
    const padding = '{"a":""}'.length;
    const largest = { a: 'x'.repeat(KEY_METADATA.maxSerializedBytes - padding) };
    // Each é is two bytes of UTF-8: within the limit in characters, over it in bytes.
    const wide = { a: 'é'.repeat(KEY_METADATA.maxSerializedBytes / 2) };
    const wideBytes = new TextEncoder().encode(JSON.stringify(wide)).length;

    expect(readMetadata(JSON.stringify(largest))).toEqual({ value: largest });
    expect(readMetadata(JSON.stringify(wide))).toEqual({
      problem: `metadata: ${wideBytes} bytes as JSON, at most ${KEY_METADATA.maxSerializedBytes}`,
    });
    expect(readMetadata(JSON.stringify(nested(KEY_METADATA.maxDepth)))).toEqual({
      value: nested(KEY_METADATA.maxDepth),
    });
    expect(readMetadata(JSON.stringify(nested(KEY_METADATA.maxDepth + 1)))).toEqual({
      problem: `metadata: nested ${KEY_METADATA.maxDepth + 1} levels deep, at most ${KEY_METADATA.maxDepth}`,
    });
  });

  it('counts the size of the compact JSON, not of the text typed', () => {
    const spaced = JSON.stringify({ a: 'x'.repeat(KEY_METADATA.maxSerializedBytes - 8) }, null, 40);

    expect(spaced.length).toBeGreaterThan(KEY_METADATA.maxSerializedBytes);
    expect('value' in readMetadata(spaced)).toBe(true);
  });

  it('refuses a number that would not come back as typed, naming where it is, and keeps the others', () => {
    const rule = 'a number must be finite and within ±9007199254740991 (2^53 − 1); send larger ones as strings';

    expect(readMetadata('{"limits": {"rps": 1e400}}')).toEqual({ problem: `metadata.limits.rps: ${rule}` });
    expect(readMetadata('{"customer_id": 9007199254740993}')).toEqual({ problem: `metadata.customer_id: ${rule}` });
    expect(readMetadata('{"tags": [1, -1e400]}')).toEqual({ problem: `metadata.tags[1]: ${rule}` });
    expect(readMetadata('{"max": 9007199254740991, "ratio": 0.25, "zero": -0}')).toEqual({
      value: { max: 9007199254740991, ratio: 0.25, zero: -0 },
    });
  });

  it('shows metadata indented, and none as an empty field', () => {
    expect(metadataText({ owner: 'team-billing' })).toBe('{\n  "owner": "team-billing"\n}');
    expect(metadataText({})).toBe('');
    expect(readMetadata(metadataText({ owner: 'team-billing', tags: ['a'] }))).toEqual({
      value: { owner: 'team-billing', tags: ['a'] },
    });
  });
});

describe('the permission filter of the list', () => {
  it('accepts a name, a wildcard, or nothing (no filter)', () => {
    expect(permissionFilterProblem('documents.read')).toBeUndefined();
    expect(permissionFilterProblem(' documents.* ')).toBeUndefined();
    expect(permissionFilterProblem('*')).toBeUndefined();
    expect(permissionFilterProblem('')).toBeUndefined();
    expect(permissionFilterProblem('   ')).toBeUndefined();
  });

  it('refuses what is not one permission name, quoting it', () => {
    expect(permissionFilterProblem('Documents')).toBe(
      '"Documents" is not a permission name, such as documents.read, documents.* or *',
    );
    expect(permissionFilterProblem('documents.read, documents.write')).toMatch(/is not a permission name/);
    expect(permissionFilterProblem('a'.repeat(PERMISSIONS.nameMaxLength + 1))).toMatch(/is not a permission name/);
  });
});

describe('an update of the permissions and metadata', () => {
  const apiKey = { permissions: ['documents.read'], metadata: { owner: 'team-billing' } };

  it('holds only what changed', () => {
    expect(changedAttributes(apiKey, ['documents.read'], { owner: 'team-billing' })).toEqual({});
    expect(changedAttributes(apiKey, ['documents.read', 'documents.write'], { owner: 'team-billing' })).toEqual({
      permissions: ['documents.read', 'documents.write'],
    });
    expect(changedAttributes(apiKey, ['documents.read'], {})).toEqual({ metadata: {} });
    expect(changedAttributes(apiKey, [], { owner: 'team-search' })).toEqual({
      permissions: [],
      metadata: { owner: 'team-search' },
    });
  });

  it('counts a new order as a change, since the API keeps the order given', () => {
    const key = { permissions: ['a', 'b'], metadata: { x: 1, y: 2 } };

    expect(changedAttributes(key, ['b', 'a'], { x: 1, y: 2 })).toEqual({ permissions: ['b', 'a'] });
    expect(changedAttributes(key, ['a', 'b'], { y: 2, x: 1 })).toEqual({ metadata: { y: 2, x: 1 } });
  });
});
