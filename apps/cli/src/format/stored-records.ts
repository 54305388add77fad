import {
  type AdminKeyRecord,
  type ApiKeyJsonV2023_06_01,
  type ApiKeyRecord,
  type EpochMicros,
  nowMicros,
  type OrganizationRecord,
  toApiKeyJsonV2023_06_01,
  type VerifierKeyRecord,
} from '@apikeys/store';

// The JSON the operator commands print for what they read from or write to the database: snake_case, like the API's.
// Their output is an interface scripts depend on, so it does not follow the API's later versions.

/** An API key as the operator commands print it: the first API version's `ApiKey`, which scripts parse. */
export type StoredApiKeyJson = ApiKeyJsonV2023_06_01;

/** An API key record in the first API version's shape, as of `now` (an expired key shows as `inactive`). */
export function storedApiKeyJson(key: ApiKeyRecord, now: EpochMicros = nowMicros()): StoredApiKeyJson {
  return toApiKeyJsonV2023_06_01(key, now);
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
