import { describe, expect, it } from 'vitest';
import { heldPermissions, PermissionQueryError, permissionQuery, satisfiesPermissionQuery } from '../src/index.js';

describe('permissionQuery', () => {
  it('parses a text once and returns the same query after', () => {
    const first = permissionQuery('memo.a AND memo.b');

    const second = permissionQuery('memo.a AND memo.b');

    expect(second).toBe(first);
    expect(satisfiesPermissionQuery(second, heldPermissions(['memo.*']))).toBe(true);
  });

  it('drops the oldest text once 256 others came after it', () => {
    const oldest = permissionQuery('memo.oldest');
    for (let i = 0; i < 255; i++) {
      permissionQuery(`memo.filler${i}`);
    }
    const kept = permissionQuery('memo.oldest');
    for (let i = 255; i < 512; i++) {
      permissionQuery(`memo.filler${i}`);
    }

    const reparsed = permissionQuery('memo.oldest');

    expect(kept).toBe(oldest);
    expect(reparsed).not.toBe(oldest);
    expect(reparsed.root).toEqual(oldest.root);
  });

  it('throws for a malformed text every time', () => {
    expect(() => permissionQuery('memo.a AND')).toThrow(PermissionQueryError);
    expect(() => permissionQuery('memo.a AND')).toThrow('expected a permission name or "(" at position 11');
  });
});
