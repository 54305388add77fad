import type { v2023_06_01 } from '@apikeys/api-types';
import { effectiveStatus } from './statuses.js';
import { microsToRfc3339 } from './time.js';
import type { ApiKeyRecord, EpochMicros } from './types.js';

// Here rather than in the server because two readers need this exact JSON: the server answers the first API version
// with it, and the operator CLI prints it for the keys it reads from the database (scripts parse that output).

/** The first API version's `ApiKey`. */
export type ApiKeyJsonV2023_06_01 = v2023_06_01.components['schemas']['ApiKey'];

/**
 * An API key record as the first API version (`v2023_06_01`) shows it (`ApiKey`), as of `now`. That version has no
 * expiry, principal or scope (see "Keys that ... cannot describe" in spec/openapi.yaml): an expired key shows as
 * `inactive`, and a key of the default workspace or with organization scope shows `workspace_id: null`.
 */
export function toApiKeyJsonV2023_06_01(key: ApiKeyRecord, now: EpochMicros): ApiKeyJsonV2023_06_01 {
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
