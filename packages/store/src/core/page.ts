/**
 * A page from the rows of a query that asked for `limit + 1` in page order (ascending when walking `backwards`):
 * at most `limit` rows, newest first, and whether more lay beyond.
 */
export function pageOf(rows: unknown[][], limit: number, backwards: boolean): { page: unknown[][]; hasMore: boolean } {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  if (backwards) {
    page.reverse();
  }
  return { page, hasMore };
}
