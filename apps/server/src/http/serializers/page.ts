/** A page of items as every version's lists show it: the items, `has_more`, and the IDs of the first and last. */
export function pageJson<Item extends { id: string }>(data: Item[], hasMore: boolean) {
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
