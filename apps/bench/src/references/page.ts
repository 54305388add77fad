import { readFileSync } from 'node:fs';
import type { ApiKey, ApiKeyList } from '@apikeys/api-types';

/** The items the references serve: the first 1000 keys of the seeded store, written to a file by the harness. */
export function loadItems(): ApiKey[] {
  const file = process.env.BENCH_PAGE_FILE;
  if (!file) {
    throw new Error('BENCH_PAGE_FILE must name the JSON file of the items to serve');
  }
  return JSON.parse(readFileSync(file, 'utf8')) as ApiKey[];
}

/** The first page of `limit` items, shaped as the real API's list response. */
export function firstPage(items: ApiKey[], limit: number): ApiKeyList {
  const data = items.slice(0, limit);
  return { data, has_more: items.length > limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** The page size a reference request asks for: 1000 when the query says so, 20 otherwise. */
export function limitOf(url: string | undefined): 20 | 1000 {
  return url?.includes('limit=1000') ? 1000 : 20;
}

/** Logs the `listening` and `ready` lines the harness waits for, in the real server's format (nothing to warm up). */
export function logListening(address: string | { port: number } | null): void {
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url })}\n${JSON.stringify({ msg: 'ready', url })}\n`);
}
