import { KEY_METADATA, PERMISSIONS } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import {
  changedAttributes,
  isPermissionName,
  jsonDepth,
  metadataProblem,
  metadataText,
  permissionFilterProblem,
  permissionsProblem,
  permissionsText,
  readMetadata,
  readPermissions,
} from '../src/key-attributes.js';

/** An object nested `levels` deep, the object itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) {
    value = { a: value };
  }
  return value;
}

describe("a key's permissions, checked against the spec's rules before they are sent", () => {
  it('accepts names, wildcards over a prefix, and * alone, up to the longest name', () => {
    for (const name of ['documents.read', 'documents.*', '*', 'a', 'billing-v2.invoices_all.read']) {
      expect(isPermissionName(name), name).toBe(true);
    }
    expect(isPermissionName('a'.repeat(PERMISSIONS.nameMaxLength))).toBe(true);
    expect(permissionsProblem(['documents.read', 'documents.*', '*'])).toBeUndefined();
    expect(permissionsProblem([])).toBeUndefined();
  });

  it.each([
    ['upper case', 'Documents.read'],
    ['an empty segment', 'documents..read'],
    ['a wildcard inside', 'documents.*.read'],
    ['a wildcard without a dot', 'documents*'],
    ['a trailing dot', 'documents.'],
    ['a space', 'documents read'],
  ])('refuses a name with %s, quoting it', (_, name) => {
    expect(isPermissionName(name)).toBe(false);
    expect(permissionsProblem(['documents.read', name])).toBe(
      `${JSON.stringify(name)} is not a permission name: lowercase letters, digits, _ and -, in segments joined by dots, such as documents.read; a last segment * grants everything under it.`,
    );
  });

  it('refuses a name over the longest, saying how long it is', () => {
    const name = 'a'.repeat(PERMISSIONS.nameMaxLength + 1);

    expect(isPermissionName(name)).toBe(false);
    expect(permissionsProblem([name])).toBe(
      `"${'a'.repeat(60)}…" has ${PERMISSIONS.nameMaxLength + 1} characters; a permission name has at most ${PERMISSIONS.nameMaxLength}.`,
    );
  });

  it('refuses more names than the spec allows, and a name listed twice', () => {
    const names = (count: number) => Array.from({ length: count }, (_, index) => `p${index}`);

    expect(permissionsProblem(names(PERMISSIONS.maxItems))).toBeUndefined();
    expect(permissionsProblem(names(PERMISSIONS.maxItems + 1))).toBe(
      `A key has at most ${PERMISSIONS.maxItems} permissions; this list has ${PERMISSIONS.maxItems + 1}.`,
    );
    expect(permissionsProblem(['documents.read', 'documents.*', 'documents.read'])).toBe(
      '"documents.read" is listed twice.',
    );
  });

  it('refuses what is not a list of strings', () => {
    expect(permissionsProblem('documents.read')).toBe('Permissions are a list of permission names.');
    expect(permissionsProblem([7])).toBe('7 is not a permission name: a name is text.');
  });
});

describe('the permissions field', () => {
  it('reads names one a line, or separated by commas or spaces, ignoring empty entries, in the order typed', () => {
    expect(readPermissions('documents.read\n\n  documents.write , billing.*,*\r\nadmin.users  ')).toEqual({
      value: ['documents.read', 'documents.write', 'billing.*', '*', 'admin.users'],
    });
    expect(readPermissions('  \n , ')).toEqual({ value: [] });
  });

  it('gives the first problem of the names it read', () => {
    expect(readPermissions('documents.read\nDocuments.Write')).toEqual({
      problem: expect.stringMatching(/^"Documents.Write" is not a permission name/),
    });
    expect(readPermissions('a, b\na')).toEqual({ problem: '"a" is listed twice.' });
  });

  it('shows permissions one a line, which it reads back', () => {
    const permissions = ['documents.read', 'documents.*'];

    expect(permissionsText(permissions)).toBe('documents.read\ndocuments.*');
    expect(readPermissions(permissionsText(permissions))).toEqual({ value: permissions });
  });
});

describe("a key's metadata, checked against the spec's limits before it is sent", () => {
  it('accepts an object up to the largest size and the deepest nesting', () => {
    const padding = '"a":""'.length + 2;
    const largest = { a: 'x'.repeat(KEY_METADATA.maxSerializedBytes - padding) };

    expect(JSON.stringify(largest)).toHaveLength(KEY_METADATA.maxSerializedBytes);
    expect(metadataProblem(largest)).toBeUndefined();
    expect(metadataProblem(nested(KEY_METADATA.maxDepth))).toBeUndefined();
    expect(metadataProblem({})).toBeUndefined();
  });

  it('counts the size in bytes of UTF-8, not in characters', () => {
    // Each é is two bytes: the object is within the limit in characters and over it in bytes.
    const value = { a: 'é'.repeat(KEY_METADATA.maxSerializedBytes / 2) };
    const bytes = new TextEncoder().encode(JSON.stringify(value)).length;

    expect(JSON.stringify(value).length).toBeLessThanOrEqual(KEY_METADATA.maxSerializedBytes);
    expect(metadataProblem(value)).toBe(
      `Metadata is ${bytes} bytes as compact JSON; at most ${KEY_METADATA.maxSerializedBytes}.`,
    );
  });

  it('refuses nesting deeper than the spec allows, arrays counting as levels', () => {
    const depth = KEY_METADATA.maxDepth + 1;

    expect(metadataProblem(nested(depth))).toBe(
      `Metadata nests ${depth} levels deep; at most ${KEY_METADATA.maxDepth} (the object itself is the first).`,
    );
    // The object, then arrays within it: one level each.
    let deepArray: unknown = 1;
    for (let level = 1; level < depth; level += 1) {
      deepArray = [deepArray];
    }
    expect(metadataProblem({ a: deepArray })).toBe(metadataProblem(nested(depth)));
    expect(jsonDepth('{"a":[[[[1]]]]}')).toBe(5);
    expect(jsonDepth('{"a":"{[{[{[","b":"\\"{"}')).toBe(1);
  });

  it('refuses what is not an object, saying what it is', () => {
    expect(metadataProblem([])).toBe('Metadata is a JSON object, such as {"owner": "team-billing"}; this is an array.');
    expect(metadataProblem('owner')).toMatch(/this is a string\.$/);
    expect(metadataProblem(3)).toMatch(/this is a number\.$/);
    expect(metadataProblem(null)).toMatch(/this is null\.$/);
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
      problem: expect.stringMatching(/^This is not valid JSON: .+\.$/),
    });
  });

  it('gives the problem of a JSON value that is not valid metadata', () => {
    expect(readMetadata('["team-billing"]')).toEqual({ problem: metadataProblem(['team-billing']) });
    expect(readMetadata(JSON.stringify(nested(KEY_METADATA.maxDepth + 1)))).toEqual({
      problem: metadataProblem(nested(KEY_METADATA.maxDepth + 1)),
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
    expect(permissionFilterProblem('')).toBeUndefined();
    expect(permissionFilterProblem('   ')).toBeUndefined();
  });

  it('refuses what is not one permission name', () => {
    expect(permissionFilterProblem('Documents')).toMatch(/^"Documents" is not a permission name/);
    expect(permissionFilterProblem('documents.read, documents.write')).toMatch(/is not a permission name/);
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
