import type { v2023_06_01 } from '@apikeys/api-types';
import { type ApiKeyRecord, type EpochMicros, effectiveStatus } from '@apikeys/store';
import { microsToRfc3339 } from './timestamps.js';

type Schemas = v2023_06_01.components['schemas'];

/**
 * An API key record as the first API version (`v2023_06_01`) shows it (`ApiKey`), as of `now`. That version has no
 * expiry, principal or scope (see "Keys that ... cannot describe" in spec/openapi.yaml): an expired key shows as
 * `inactive`, and a key of the default workspace or with organization scope shows `workspace_id: null`. The later
 * version's shape is `api-key-v2026_10_21.ts`.
 */
export function toApiKeyJson(key: ApiKeyRecord, now: EpochMicros): Schemas['ApiKey'] {
  const status = effectiveStatus(key, now);
  return {
    id: key.id,
    type: 'api_key',
    name: key.name,
    workspace_id: key.workspaceId,
    created_at: microsToRfc3339(key.createdAt),
    // Records are never changed once read, so the JSON may share this small object rather than copy it.
    created_by: key.createdBy,
    partial_key_hint: key.partialKeyHint,
    status: status === 'expired' ? 'inactive' : status,
  };
}
