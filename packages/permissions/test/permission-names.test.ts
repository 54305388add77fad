import { describe, expect, it } from 'vitest';
import { grants, heldPermissions, holdsPermission, isPermissionName, namesGranting } from '../src/index.js';

/** Every name of up to three segments over a few segments that share prefixes, with and without `.*`. */
function sampleNames(): string[] {
  const segments = ['a', 'ab', 'a-b', 'a_b', 'doc', 'documents', 'documentsx', 'read', 'reader'];
  const names = ['*'];
  let level = segments.slice();
  for (let length = 1; length <= 3; length++) {
    names.push(...level, ...level.map((name) => `${name}.*`));
    level = level.flatMap((name) => segments.map((segment) => `${name}.${segment}`));
  }
  return names;
}

describe('isPermissionName', () => {
  it.each([
    'documents.read',
    'documents.*',
    'documents.drafts.write',
    '*',
    'a',
    'a-b_c.d9',
    '0.1',
    'and',
    'a'.repeat(128),
    `${'a'.repeat(126)}.*`,
  ])('accepts %j', (name) => {
    expect(isPermissionName(name)).toBe(true);
  });

  it.each([
    '',
    'a'.repeat(129),
    `${'a'.repeat(127)}.*`,
    'Documents.read',
    'documents.READ',
    'AND',
    'a..b',
    'a.',
    '.a',
    '*.a',
    'a.*.b',
    'a.**',
    '**',
    'a*',
    'a b',
    'a\n',
    'é',
    'a/b',
  ])('refuses %j', (name) => {
    expect(isPermissionName(name)).toBe(false);
  });

  it.each([1, null, undefined, ['a'], { name: 'a' }])('refuses the non-string %j', (value) => {
    expect(isPermissionName(value)).toBe(false);
  });
});

describe('grants', () => {
  it.each([
    ['documents.read', 'documents.read', true],
    ['*', 'documents.read', true],
    ['*', '*', true],
    ['documents.*', 'documents.read', true],
    ['documents.*', 'documents.drafts.write', true],
    ['documents.*', 'documents.drafts.*', true],
    ['documents.*', 'documents.*', true],
    ['documents.*', 'documents', false],
    ['documents.*', 'documentsx.read', false],
    ['documents.*', '*', false],
    ['doc.*', 'documents.read', false],
    ['documents.read', 'documents.reader', false],
    ['documents.read', 'documents.read.x', false],
    ['documents.drafts.*', 'documents.*', false],
  ])('%s grants %s: %s', (held, required, expected) => {
    expect(grants(held, required)).toBe(expected);
  });
});

describe('namesGranting', () => {
  it.each([
    ['documents.drafts.write', ['documents.drafts.write', 'documents.drafts.*', 'documents.*', '*']],
    ['documents.drafts.*', ['documents.drafts.*', 'documents.*', '*']],
    ['documents.*', ['documents.*', '*']],
    ['documents', ['documents', '*']],
    ['*', ['*']],
  ])('lists what grants %s, most specific first', (name, expected) => {
    expect(namesGranting(name)).toEqual(expected);
  });

  it('agrees with grants() on every pair of many names', () => {
    const names = sampleNames();
    const disagreements: string[] = [];

    for (const required of names) {
      const granting = new Set(namesGranting(required));
      for (const held of names) {
        if (grants(held, required) !== granting.has(held)) {
          disagreements.push(`${held} → ${required}`);
        }
      }
    }

    expect(names.length).toBeGreaterThan(1000);
    expect(names.every(isPermissionName)).toBe(true);
    expect(disagreements).toEqual([]);
  });

  it('lists only permission names, each granting the name', () => {
    for (const required of sampleNames()) {
      const granting = namesGranting(required);

      expect(granting.every((held) => isPermissionName(held) && grants(held, required))).toBe(true);
      expect(new Set(granting).size).toBe(granting.length);
    }
  });
});

describe('holdsPermission', () => {
  it('looks up the name and the wildcards over it', () => {
    const held = heldPermissions(['documents.*', 'billing.read']);

    expect(holdsPermission(held, 'documents.drafts.write')).toBe(true);
    expect(holdsPermission(held, 'billing.read')).toBe(true);
    expect(holdsPermission(held, 'billing.write')).toBe(false);
    expect(holdsPermission(held, 'documents')).toBe(false);
    expect(holdsPermission(heldPermissions([]), '*')).toBe(false);
  });
});
