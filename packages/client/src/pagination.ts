import { PaginationError } from './errors.js';
import type {
  ApiKey,
  ApiVersion,
  AuditEvent,
  LatestApiVersion,
  ListApiKeysQuery,
  ListApiKeysResponse,
  ListAuditEventsQuery,
  VersionWith,
} from './types.js';

/**
 * The direction a page was fetched in: `after` pages (no cursor, or `after_id`) go towards older items, `before`
 * pages (`before_id`) towards newer ones. Items inside a page are newest first either way.
 */
export type PageDirection = 'after' | 'before';

/** What every paged query has: the two cursors, of which a query sends at most one. */
export interface CursorQuery {
  before_id?: string;
  after_id?: string;
}

/** The fields of a page besides `data`, the same in every list of every version (`ApiKeyList`, `AuditEventList`). */
export type PageFields = Omit<ListApiKeysResponse<ApiVersion>, 'data'>;

/** Fetches the page for a query; a page object uses it to fetch its neighbours. */
export type FetchPage<Item, Query extends CursorQuery> = (query: Query) => Promise<CursorPage<Item, Query>>;

/**
 * What a page knows besides its body: the query that fetched it, its response's `request-id`, and how to fetch more.
 */
export interface PageContext<Item, Query extends CursorQuery> {
  query: Query;
  requestId: string | undefined;
  fetchPage: FetchPage<Item, Query>;
}

/** The query for the page beside a cursor: the same filters and limit, and only that cursor. */
function queryWithCursor<Query extends CursorQuery>(query: Query, direction: PageDirection, cursor: string): Query {
  const { before_id: _beforeId, after_id: _afterId, ...rest } = query;
  return (direction === 'after' ? { ...rest, after_id: cursor } : { ...rest, before_id: cursor }) as Query;
}

/** Where a page stands in its list: the fields of its body besides `data`, and the query that fetched it. */
export type PagePosition<Query extends CursorQuery> = PageFields & { query: Query };

/**
 * The queries of a page's neighbours, without fetching them: `next` (older, `after_id` = `last_id`) and `previous`
 * (newer, `before_id` = `first_id`), with the same filters and limit, or null where there is certainly none. In the
 * direction the page was fetched, `has_more` decides. Against it, `has_more` says nothing: a neighbour is offered
 * unless the page is the newest (fetched without a cursor), and may turn out empty. An empty page has none.
 */
export function neighbourQueries<Query extends CursorQuery>(
  page: PagePosition<Query>,
): { previous: Query | null; next: Query | null } {
  const fetched: PageDirection = page.query.before_id === undefined ? 'after' : 'before';
  const newest = page.query.before_id === undefined && page.query.after_id === undefined;
  const neighbour = (direction: PageDirection): Query | null => {
    const cursor = direction === 'after' ? page.last_id : page.first_id;
    const possible = direction === fetched ? page.has_more : !(direction === 'before' && newest);
    return cursor !== null && possible ? queryWithCursor(page.query, direction, cursor) : null;
  };
  return { previous: neighbour('before'), next: neighbour('after') };
}

/**
 * One page of a cursor-paged list (`data`, `has_more`, `first_id`, `last_id`), the query that fetched it, and the
 * means to fetch its neighbours. Iterating it with `for await` yields every item from this page on, following the
 * cursors in the page's direction. `ApiKeyPage` and `AuditEventPage` are its two kinds.
 */
export class CursorPage<Item, Query extends CursorQuery> implements PageFields, AsyncIterable<Item> {
  readonly data: Item[];
  readonly has_more: PageFields['has_more'];
  readonly first_id: PageFields['first_id'];
  readonly last_id: PageFields['last_id'];
  /** The query that fetched this page, cursor included. */
  readonly query: Query;
  /** The `request-id` of the response. */
  readonly requestId: string | undefined;
  readonly #fetchPage: FetchPage<Item, Query>;

  constructor(body: PageFields & { data: Item[] }, context: PageContext<Item, Query>) {
    this.data = body.data;
    this.has_more = body.has_more;
    this.first_id = body.first_id;
    this.last_id = body.last_id;
    this.query = context.query;
    this.requestId = context.requestId;
    this.#fetchPage = context.fetchPage;
  }

  /** Whether more items exist beyond this page in the direction it was fetched in (`has_more`). */
  get hasMore(): boolean {
    return this.has_more;
  }

  /** `before` when this page was fetched with `before_id`, else `after`. */
  get direction(): PageDirection {
    return this.query.before_id === undefined ? 'after' : 'before';
  }

  /** The next (older) page, fetched with `after_id` = `last_id` and the same filters; null when there is none. */
  nextPage(): Promise<this | null> {
    return this.#neighbour('after');
  }

  /**
   * The previous (newer) page, fetched with `before_id` = `first_id` and the same filters; null when there is none.
   * A page fetched without a cursor is the newest, so it has no previous page.
   */
  previousPage(): Promise<this | null> {
    return this.#neighbour('before');
  }

  /** The page for `query`, of this page's class: the client hands every page the function that fetched it. */
  async #fetch(query: Query): Promise<this> {
    return (await this.#fetchPage(query)) as this;
  }

  async #neighbour(direction: PageDirection): Promise<this | null> {
    const query = neighbourQueries(this)[direction === 'after' ? 'next' : 'previous'];
    if (query === null) {
      return null;
    }
    const cursor = direction === 'after' ? this.last_id : this.first_id;
    if (cursor === this.query.after_id || cursor === this.query.before_id) {
      throw new PaginationError(`the server returned the cursor ${cursor} it was given`, { requestId: this.requestId });
    }
    // Against the direction of travel `has_more` says nothing, so only an empty answer tells there is no page.
    const page = await this.#fetch(query);
    return page.data.length === 0 ? null : page;
  }

  /**
   * Every item from this page on, page after page in this page's direction, until `has_more` is false, in the order
   * of travel: newest first when walking forwards (`after`), oldest first when walking backwards (`before`, each
   * page reversed), so the items come out in one consistent order. Throws a `PaginationError` rather than loop when
   * the server hands out a cursor it has handed out before. Holds one page at a time.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    const direction = this.direction;
    const seen = new Set<string>();
    const start = direction === 'after' ? this.query.after_id : this.query.before_id;
    if (start !== undefined) {
      seen.add(start);
    }
    let page: CursorPage<Item, Query> = this;
    for (;;) {
      yield* direction === 'after' ? page.data : [...page.data].reverse();
      if (!page.has_more) {
        return;
      }
      const cursor = direction === 'after' ? page.last_id : page.first_id;
      if (cursor === null) {
        throw new PaginationError('the server said has_more on an empty page', { requestId: page.requestId });
      }
      if (seen.has(cursor)) {
        throw new PaginationError(`the server returned the cursor ${cursor} twice; stopping to avoid a loop`, {
          requestId: page.requestId,
        });
      }
      seen.add(cursor);
      page = await page.#fetch(queryWithCursor(page.query, direction, cursor));
    }
  }

  /** The response body, as the API sent it. */
  toJSON(): PageFields & { data: Item[] } {
    return { data: this.data, has_more: this.has_more, first_id: this.first_id, last_id: this.last_id };
  }
}

/** One page of API keys, as `apiKeys.list` returns it (see `CursorPage`). */
export class ApiKeyPage<Version extends ApiVersion = LatestApiVersion> extends CursorPage<
  ApiKey<Version>,
  ListApiKeysQuery<Version>
> {}

/** One page of the audit trail, newest first, as `auditEvents.list` returns it (see `CursorPage`). */
export class AuditEventPage<Version extends VersionWith<'listAuditEvents'> = LatestApiVersion> extends CursorPage<
  AuditEvent<Version>,
  ListAuditEventsQuery<Version>
> {}
