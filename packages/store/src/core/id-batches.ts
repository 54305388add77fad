/** The most IDs one statement looks up: well within SQLite's and PostgreSQL's limits on parameters. */
export const IDS_PER_STATEMENT = 500;

/**
 * Reads by `ids` (each once, however often listed) in statements of at most `IDS_PER_STATEMENT` IDs, one after the
 * other, and returns what they all found.
 */
export async function readByIds<Row>(
  ids: Iterable<string>,
  read: (batch: string[]) => Promise<readonly Row[]>,
): Promise<Row[]> {
  const unique = [...new Set(ids)];
  const found: Row[] = [];
  for (let from = 0; from < unique.length; from += IDS_PER_STATEMENT) {
    found.push(...(await read(unique.slice(from, from + IDS_PER_STATEMENT))));
  }
  return found;
}
