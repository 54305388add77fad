import { API_KEY_STATUSES_BY_VERSION, LIST_LIMIT } from '@apikeys/api-types';
import { type ApiKeyStatus, DEFAULT_API_VERSION, type ListApiKeysQuery } from '@apikeys/client';

/** The statuses the console's API version has, in the spec's order: the options of the status filter. */
export const STATUSES: readonly ApiKeyStatus[] = API_KEY_STATUSES_BY_VERSION[DEFAULT_API_VERSION];

/** The page sizes offered, within the spec's bounds of `limit`; the spec's default among them. */
export const PAGE_SIZES: readonly number[] = [...new Set([10, LIST_LIMIT.default, 50, 100])]
  .filter((size) => size >= LIST_LIMIT.minimum && size <= LIST_LIMIT.maximum)
  .sort((a, b) => a - b);

/** The URL parameters of the keys list: the query of `listApiKeys`, spelled as the API spells it. */
const FILTERS = ['status', 'workspace_id', 'created_by_user_id'] as const;

function isStatus(value: string): value is ApiKeyStatus {
  return (STATUSES as readonly string[]).includes(value);
}

/**
 * The `listApiKeys` query a keys-list URL stands for. A parameter that the API would refuse (an unknown status, a
 * page size out of bounds, both cursors) is left out rather than sent, so that a hand-edited URL still shows keys.
 */
export function queryFromSearch(search: URLSearchParams): ListApiKeysQuery {
  const query: ListApiKeysQuery = {};
  const status = search.get('status');
  if (status !== null && isStatus(status)) {
    query.status = status;
  }
  for (const name of ['workspace_id', 'created_by_user_id'] as const) {
    const value = search.get(name)?.trim();
    if (value) {
      query[name] = value;
    }
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

/** What a page of the list knows about its neighbours: the cursor fields of its body and the query that fetched it. */
export interface PagePosition {
  query: ListApiKeysQuery;
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/**
 * The queries of the neighbouring pages, or null where there is none. Going forwards (no cursor or `after_id`),
 * `has_more` tells whether older keys follow; a page reached with `after_id` has newer keys before it. Going
 * backwards (`before_id`), `has_more` tells whether newer keys precede, and older ones follow (the page came from
 * there).
 */
export function neighbours(page: PagePosition): { previous: ListApiKeysQuery | null; next: ListApiKeysQuery | null } {
  const base = withoutCursor(page.query);
  const backwards = page.query.before_id !== undefined;
  const hasNewer = backwards ? page.has_more : page.query.after_id !== undefined;
  const hasOlder = backwards ? page.last_id !== null : page.has_more;
  return {
    previous: hasNewer && page.first_id !== null ? { ...base, before_id: page.first_id } : null,
    next: hasOlder && page.last_id !== null ? { ...base, after_id: page.last_id } : null,
  };
}
