import type { v2026_10_21 } from '@apikeys/api-types';
import type { ApiKeyPage } from '@apikeys/store';
import { toApiKeyJson } from './api-key-v2026_10_21.js';
import type { SerializeContext } from './context.js';
import { pageJson } from './page.js';

type Schemas = v2026_10_21.components['schemas'];

/** A page of keys as version `v2026_10_21`'s `ApiKeyList`. */
export function toApiKeyListJson(page: ApiKeyPage, context: SerializeContext): Schemas['ApiKeyList'] {
  return pageJson(
    page.keys.map((key) => toApiKeyJson(key, context)),
    page.hasMore,
  );
}
