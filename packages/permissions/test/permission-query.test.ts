import { PERMISSION_QUERY } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import {
  grants,
  heldPermissions,
  isPermissionName,
  PermissionQueryError,
  parsePermissionQuery,
  permissionQuery,
  satisfiesPermissionQuery,
} from '../src/index.js';
import { MALFORMED_PERMISSION_QUERY_CASES, PERMISSION_QUERY_CASES } from '../testing/permission-query-cases.js';

/** Where `parsePermissionQuery(query)` says the query goes wrong. */
function parseError(query: string): PermissionQueryError {
  try {
    parsePermissionQuery(query);
  } catch (error) {
    if (error instanceof PermissionQueryError) {
      return error;
    }
    throw error;
  }
  throw new Error(`${JSON.stringify(query)} was accepted`);
}

describe('satisfiesPermissionQuery', () => {
  it.each(PERMISSION_QUERY_CASES)('$query with $held is $expected', ({ query, held, expected }) => {
    const parsed = parsePermissionQuery(query);

    const satisfied = satisfiesPermissionQuery(parsed, heldPermissions(held));

    expect(satisfied).toBe(expected);
    expect(satisfiesPermissionQuery(permissionQuery(query), heldPermissions(held))).toBe(expected);
  });

  it('gives the same answer as grants() over the names of a single-name query', () => {
    for (const { query, held } of PERMISSION_QUERY_CASES.filter((row) => isPermissionName(row.query))) {
      const expected = held.some((name) => grants(name, query));

      expect(satisfiesPermissionQuery(parsePermissionQuery(query), heldPermissions(held))).toBe(expected);
    }
  });

  it('covers the limits exactly reached', () => {
    const lengths = PERMISSION_QUERY_CASES.map((row) => row.query.length);

    expect(lengths).toContain(PERMISSION_QUERY.maxLength);
  });
});

describe('parsePermissionQuery', () => {
  it('binds AND tighter than OR', () => {
    const parsed = parsePermissionQuery('a OR b AND c');

    expect(parsed.root).toEqual({
      kind: 'or',
      operands: [
        { kind: 'name', name: 'a' },
        {
          kind: 'and',
          operands: [
            { kind: 'name', name: 'b' },
            { kind: 'name', name: 'c' },
          ],
        },
      ],
    });
    expect(parsed.text).toBe('a OR b AND c');
  });

  it('lets parentheses override precedence, and keeps a name alone as a name', () => {
    expect(parsePermissionQuery('(a OR b) AND c').root).toEqual({
      kind: 'and',
      operands: [
        {
          kind: 'or',
          operands: [
            { kind: 'name', name: 'a' },
            { kind: 'name', name: 'b' },
          ],
        },
        { kind: 'name', name: 'c' },
      ],
    });
    expect(parsePermissionQuery(' ((documents.*)) ').root).toEqual({ kind: 'name', name: 'documents.*' });
  });

  it.each(MALFORMED_PERMISSION_QUERY_CASES)(
    'refuses $query at position $position: $reason',
    ({ query, position, reason }) => {
      const error = parseError(query);

      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('PermissionQueryError');
      expect({ position: error.position, reason: error.reason }).toEqual({ position, reason });
      expect(error.message).toBe(`${reason} at position ${position}`);
    },
  );

  it('writes the message as the spec shows it', () => {
    expect(parseError('(a OR b) AND ( ').message).toBe('expected a permission name or "(" at position 16');
    expect(parseError(`${'('.repeat(9)}a${')'.repeat(9)}`).message).toBe(
      'more than 8 levels of parentheses at position 9',
    );
    expect(parseError('x'.repeat(1001)).message).toBe('the query is longer than 1000 characters at position 1001');
  });
});
