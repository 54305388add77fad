import type { v2023_06_01 } from '@apikeys/api-types';
import {
  type AdminKeyRecord,
  type ApiKeyRecord,
  type EpochMicros,
  effectiveStatus,
  nowMicros,
  type OrganizationRecord,
  type VerifierKeyRecord,
} from '@apikeys/store';

// The JSON the operator commands print for what they read from or write to the database: snake_case, like the API's.
// Their output is an interface scripts depend on, so it does not follow the API's later versions.

/** An API key as the operator commands print it: the first API version's `ApiKey`, which scripts parse. */
export type StoredApiKeyJson = v2023_06_01.components['schemas']['ApiKey'];

/** Microseconds since the epoch as RFC 3339 in UTC with six fractional digits: `2024-10-30T23:58:27.427722Z`. */
export function microsToRfc3339(micros: EpochMicros): string {
  const second = Math.floor(micros / 1_000_000);
  const dateTime = new Date(second * 1000).toISOString().slice(0, 19);
  return `${dateTime}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

/**
 * An API key record in the first API version's shape, as of `now`: that version has no expiry, so an expired key
 * shows as `inactive`.
 */
export function storedApiKeyJson(key: ApiKeyRecord, now: EpochMicros = nowMicros()): StoredApiKeyJson {
  const status = effectiveStatus(key, now);
  return {
    id: key.id,
    type: 'api_key',
    name: key.name,
    workspace_id: key.workspaceId,
    created_at: microsToRfc3339(key.createdAt),
    created_by: key.createdBy,
    partial_key_hint: key.partialKeyHint,
    status: status === 'expired' ? 'inactive' : status,
  };
}

/** An admin key or a verifier key (the keys that authenticate calls to the API), without its secret. */
export function credentialKeyJson(key: AdminKeyRecord | VerifierKeyRecord) {
  return {
    id: key.id,
    organization_id: key.organizationId,
    name: key.name,
    partial_key_hint: key.partialKeyHint,
    status: key.status,
  };
}

/** An organization: its ID and name only. */
export function organizationJson({ id, name }: OrganizationRecord): { id: string; name: string } {
  return { id, name };
}
