import { PaginationError } from './errors.js';
import type { ApiKey, ApiVersion, LatestApiVersion, ListApiKeysQuery, ListApiKeysResponse } from './types.js';

/**
 * The direction a page was fetched in: `after` pages (no cursor, or `after_id`) go towards older keys, `before`
 * pages (`before_id`) towards newer ones. Keys inside a page are newest first either way.
 */
export type PageDirection = 'after' | 'before';

/** Fetches the page for a query; the page object uses it to fetch its neighbours. */
export type FetchPage<Version extends ApiVersion = LatestApiVersion> = (
  query: ListApiKeysQuery<Version>,
) => Promise<ApiKeyPage<Version>>;

/** The fields of a page besides `data`, the same in every version. */
type PageFields = Omit<ListApiKeysResponse<ApiVersion>, 'data'>;

/** The query for the page beside a cursor: the same filters and limit, and only that cursor. */
function queryWithCursor<Version extends ApiVersion>(
  query: ListApiKeysQuery<Version>,
  direction: PageDirection,
  cursor: string,
): ListApiKeysQuery<Version> {
  const { before_id: _beforeId, after_id: _afterId, ...rest } = query;
  return direction === 'after' ? { ...rest, after_id: cursor } : { ...rest, before_id: cursor };
}

/**
 * One page of API keys: the response body (`data`, `has_more`, `first_id`, `last_id`), the query that fetched it,
 * and the means to fetch its neighbours. Iterating it with `for await` yields every key from this page on, following
 * the cursors in the page's direction.
 */
export class ApiKeyPage<Version extends ApiVersion = LatestApiVersion>
  implements PageFields, AsyncIterable<ApiKey<Version>>
{
  readonly data: ApiKey<Version>[];
  readonly has_more: PageFields['has_more'];
  readonly first_id: PageFields['first_id'];
  readonly last_id: PageFields['last_id'];
  /** The query that fetched this page, cursor included. */
  readonly query: ListApiKeysQuery<Version>;
  /** The `request-id` of the response. */
  readonly requestId: string | undefined;
  readonly #fetchPage: FetchPage<Version>;

  constructor(
    body: PageFields & { data: ApiKey<Version>[] },
    context: { query: ListApiKeysQuery<Version>; requestId: string | undefined; fetchPage: FetchPage<Version> },
  ) {
    this.data = body.data;
    this.has_more = body.has_more;
    this.first_id = body.first_id;
    this.last_id = body.last_id;
    this.query = context.query;
    this.requestId = context.requestId;
    this.#fetchPage = context.fetchPage;
  }

  /** Whether more keys exist beyond this page in the direction it was fetched in (`has_more`). */
  get hasMore(): boolean {
    return this.has_more;
  }

  /** `before` when this page was fetched with `before_id`, else `after`. */
  get direction(): PageDirection {
    return this.query.before_id === undefined ? 'after' : 'before';
  }

  /** The next (older) page, fetched with `after_id` = `last_id` and the same filters; null when there is none. */
  nextPage(): Promise<ApiKeyPage<Version> | null> {
    return this.#neighbour('after');
  }

  /**
   * The previous (newer) page, fetched with `before_id` = `first_id` and the same filters; null when there is none.
   * A page fetched without a cursor is the newest, so it has no previous page.
   */
  previousPage(): Promise<ApiKeyPage<Version> | null> {
    return this.#neighbour('before');
  }

  async #neighbour(direction: PageDirection): Promise<ApiKeyPage<Version> | null> {
    const cursor = direction === 'after' ? this.last_id : this.first_id;
    if (cursor === null) {
      return null;
    }
    const isFirstPage = this.query.before_id === undefined && this.query.after_id === undefined;
    if ((direction === this.direction && !this.has_more) || (direction === 'before' && isFirstPage)) {
      return null;
    }
    if (cursor === this.query.after_id || cursor === this.query.before_id) {
      throw new PaginationError(`the server returned the cursor ${cursor} it was given`, { requestId: this.requestId });
    }
    // Against the direction of travel `has_more` says nothing, so only an empty answer tells there is no page.
    const page = await this.#fetchPage(queryWithCursor(this.query, direction, cursor));
    return page.data.length === 0 ? null : page;
  }

  /**
   * Every key from this page on, page after page in this page's direction, until `has_more` is false, in the order
   * of travel: newest first when walking forwards (`after`), oldest first when walking backwards (`before`, each
   * page reversed), so the keys come out in one consistent order. Throws a `PaginationError` rather than loop when
   * the server hands out a cursor it has handed out before.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<ApiKey<Version>, void, undefined> {
    const direction = this.direction;
    const seen = new Set<string>();
    const start = direction === 'after' ? this.query.after_id : this.query.before_id;
    if (start !== undefined) {
      seen.add(start);
    }
    let page: ApiKeyPage<Version> = this;
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
      page = await page.#fetchPage(queryWithCursor(page.query, direction, cursor));
    }
  }

  /** The response body, as the API sent it. */
  toJSON(): PageFields & { data: ApiKey<Version>[] } {
    return { data: this.data, has_more: this.has_more, first_id: this.first_id, last_id: this.last_id };
  }
}
