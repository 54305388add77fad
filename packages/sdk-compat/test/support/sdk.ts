import Anthropic from '@anthropic-ai/sdk';
import type { ApiVersion } from '@apikeys/api-types';

/** The official SDK constructed as its README shows: an admin key and the server's URL, and nothing else. */
export function sdkClient(apiKey: string, baseURL: string): Anthropic {
  return new Anthropic({ apiKey, baseURL });
}

/** Everything an auto-paginating iteration yields, in order. */
export async function collect<Item>(items: AsyncIterable<Item>): Promise<Item[]> {
  const all: Item[] = [];
  for await (const item of items) {
    all.push(item);
  }
  return all;
}

/**
 * The API version `@anthropic-ai/sdk` 1.10.0 sends in `anthropic-version` (its client.ts). `satisfies` makes it a
 * compile error for the server to drop the version this SDK speaks.
 */
export const SDK_API_VERSION = '2026-10-21' satisfies ApiVersion;
