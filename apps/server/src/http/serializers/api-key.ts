import type { ApiKey, ApiKeyList } from '@apikeys/api-types';
import type { ApiKeyPage, ApiKeyRecord } from '@apikeys/store';
import { microsToRfc3339 } from './timestamps.js';

/**
 * The one place where an API key record becomes the API's JSON (the spec's `ApiKey` schema). A later API version
 * that shapes keys differently gets a serializer of its own beside this one.
 */
export function toApiKeyJson(key: ApiKeyRecord): ApiKey {
  return {
    id: key.id,
    type: 'api_key',
    name: key.name,
    workspace_id: key.workspaceId,
    created_at: microsToRfc3339(key.createdAt),
    // Records are never changed once read, so the JSON may share this small object rather than copy it.
    created_by: key.createdBy,
    partial_key_hint: key.partialKeyHint,
    status: key.status,
  };
}

/** A page of keys as the API's `ApiKeyList`: the keys, `has_more`, and the IDs of the first and last key. */
export function toApiKeyListJson(page: ApiKeyPage): ApiKeyList {
  const data = page.keys.map(toApiKeyJson);
  return {
    data,
    has_more: page.hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  };
}
