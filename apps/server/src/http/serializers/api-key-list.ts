import type { v2023_06_01 } from '@apikeys/api-types';
import type { ApiKeyPage, EpochMicros } from '@apikeys/store';
import { toApiKeyJson } from './api-key.js';
import { pageJson } from './page.js';

type Schemas = v2023_06_01.components['schemas'];

/** A page of keys as the first version's `ApiKeyList`, as of `now`. */
export function toApiKeyListJson(page: ApiKeyPage, now: EpochMicros): Schemas['ApiKeyList'] {
  return pageJson(
    page.keys.map((key) => toApiKeyJson(key, now)),
    page.hasMore,
  );
}
