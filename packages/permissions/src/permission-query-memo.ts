import { type PermissionQuery, parsePermissionQuery } from './permission-query.js';

/** How many distinct query texts the memo keeps; a gateway sends a few, millions of times. */
const MEMO_SIZE = 256;

const memo = new Map<string, PermissionQuery>();

/**
 * `parsePermissionQuery`, remembered per text (the oldest of 256 texts is dropped first). Malformed queries are
 * not remembered: they throw `PermissionQueryError` every time.
 */
export function permissionQuery(text: string): PermissionQuery {
  const known = memo.get(text);
  if (known !== undefined) {
    return known;
  }
  const query = parsePermissionQuery(text);
  if (memo.size >= MEMO_SIZE) {
    memo.delete(memo.keys().next().value as string);
  }
  memo.set(text, query);
  return query;
}
