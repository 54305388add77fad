import { API_KEY_STATUSES_BY_VERSION, LIST_LIMIT } from '@apikeys/api-types';
import { type ApiKeyStatus, DEFAULT_API_VERSION, type ListApiKeysQuery } from '@apikeys/client';
import { isPermissionName } from '@apikeys/permissions';

/** The statuses the console's API version has, in the spec's order: the options of the status filter. */
export const STATUSES: readonly ApiKeyStatus[] = API_KEY_STATUSES_BY_VERSION[DEFAULT_API_VERSION];

/** The page sizes offered, within the spec's bounds of `limit`; the spec's default among them. */
export const PAGE_SIZES: readonly number[] = [...new Set([10, LIST_LIMIT.default, 50, 100])]
  .filter((size) => size >= LIST_LIMIT.minimum && size <= LIST_LIMIT.maximum)
  .sort((a, b) => a - b);

/** The filters of the keys list typed as text: query parameters of `listApiKeys`, spelled as the API spells them. */
const TEXT_FILTERS = ['workspace_id', 'created_by_user_id'] as const;

/**
 * The filters of the keys list, in the order of the form and of the address: the status, the text ones, then the
 * permission the keys must grant.
 */
export const FILTERS = ['status', ...TEXT_FILTERS, 'permission'] as const;

function isStatus(value: string): value is ApiKeyStatus {
  return (STATUSES as readonly string[]).includes(value);
}

/**
 * The `listApiKeys` query a keys-list URL stands for. A parameter that the API would refuse (an unknown status, a
 * permission that is not a permission name, a page size out of bounds, both cursors) is left out rather than sent,
 * so that a hand-edited URL still shows keys.
 */
export function queryFromSearch(search: URLSearchParams): ListApiKeysQuery {
  const query: ListApiKeysQuery = {};
  const status = search.get('status');
  if (status !== null && isStatus(status)) {
    query.status = status;
  }
  for (const name of TEXT_FILTERS) {
    const value = search.get(name)?.trim();
    if (value) {
      query[name] = value;
    }
  }
  const permission = search.get('permission')?.trim();
  if (permission && isPermissionName(permission)) {
    query.permission = permission;
  }
  const limit = search.get('limit');
  if (limit !== null && /^\d+$/.test(limit)) {
    const size = Number(limit);
    if (size >= LIST_LIMIT.minimum && size <= LIST_LIMIT.maximum) {
      query.limit = size;
    }
  }
  const after = search.get('after_id');
  const before = search.get('before_id');
  if (after && !before) {
    query.after_id = after;
  } else if (before && !after) {
    query.before_id = before;
  }
  return query;
}

/** The URL parameters of a query, in a stable order; the default page size is left out. */
export function searchFromQuery(query: ListApiKeysQuery): URLSearchParams {
  const search = new URLSearchParams();
  for (const name of FILTERS) {
    const value = query[name];
    if (value) {
      search.set(name, value);
    }
  }
  if (query.limit !== undefined && query.limit !== LIST_LIMIT.default) {
    search.set('limit', String(query.limit));
  }
  if (query.after_id) {
    search.set('after_id', query.after_id);
  } else if (query.before_id) {
    search.set('before_id', query.before_id);
  }
  return search;
}

/** The same filters and page size, without a cursor: the first page. */
export function withoutCursor(query: ListApiKeysQuery): ListApiKeysQuery {
  const { after_id: _after, before_id: _before, ...rest } = query;
  return rest;
}

/** Whether a query filters at all (a cursor or a page size is not a filter). */
export function hasFilters(query: ListApiKeysQuery): boolean {
  return FILTERS.some((name) => query[name] !== undefined);
}
