import { LIST_LIMIT } from '@apikeys/api-types';
import { describe, expect, it } from 'vitest';
import { FILTERS, PAGE_SIZES, queryFromSearch, searchFromQuery, withoutCursor } from '../src/list-search.js';

describe('the keys list in the URL', () => {
  it('reads the filters, the page size and the cursor', () => {
    const search = new URLSearchParams(
      'status=inactive&workspace_id=wrkspc_1&created_by_user_id=user_1&permission=documents.read&limit=50&after_id=apikey_9',
    );

    expect(queryFromSearch(search)).toEqual({
      status: 'inactive',
      workspace_id: 'wrkspc_1',
      created_by_user_id: 'user_1',
      permission: 'documents.read',
      limit: 50,
      after_id: 'apikey_9',
    });
  });

  it.each([
    ['an unknown status', 'status=deleted'],
    ['a page size out of bounds', `limit=${LIST_LIMIT.maximum + 1}`],
    ['a page size of 0', 'limit=0'],
    ['a page size that is not plain digits', 'limit=1e2'],
    ['both cursors', 'after_id=apikey_1&before_id=apikey_2'],
    ['empty filters', 'workspace_id=&created_by_user_id=%20&permission='],
    ['a permission that is not a permission name', 'permission=Documents.Read'],
    ['a permission list', 'permission=documents.read,documents.write'],
  ])('leaves out what the API would refuse: %s', (_, search) => {
    expect(queryFromSearch(new URLSearchParams(search))).toEqual({});
  });

  it('reads a wildcard permission, trimmed, as one to filter by', () => {
    expect(queryFromSearch(new URLSearchParams('permission=%20documents.*%20'))).toEqual({ permission: 'documents.*' });
    expect(queryFromSearch(new URLSearchParams('permission=*'))).toEqual({ permission: '*' });
  });

  it('writes a query back in a stable order, without the default page size', () => {
    const query = { limit: LIST_LIMIT.default, before_id: 'apikey_1', status: 'active' as const };

    expect(searchFromQuery(query).toString()).toBe('status=active&before_id=apikey_1');
    expect(queryFromSearch(searchFromQuery(query))).toEqual({ status: 'active', before_id: 'apikey_1' });
  });

  it('writes every filter it reads, in the order of FILTERS', () => {
    const search = new URLSearchParams(
      FILTERS.map((name): [string, string] => [name, name === 'status' ? 'archived' : `${name}_1`]),
    );

    expect(searchFromQuery(queryFromSearch(search)).toString()).toBe(search.toString());
  });

  it('offers page sizes within the spec, its default among them', () => {
    expect(PAGE_SIZES).toContain(LIST_LIMIT.default);
    expect(PAGE_SIZES.every((size) => size >= LIST_LIMIT.minimum && size <= LIST_LIMIT.maximum)).toBe(true);
    expect(withoutCursor({ status: 'active', after_id: 'apikey_1', limit: 10 })).toEqual({
      status: 'active',
      limit: 10,
    });
  });
});
