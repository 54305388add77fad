import type { ApiKeyRecord, Store } from '@apikeys/store';
import { createTestKey, type TestKeyFields } from '@apikeys/store/testing';

/**
 * Creates an API key straight in the store (this SDK version has no create method) and returns it as the store
 * holds it, read back, so that expectations compare with the stored record rather than with what create returned.
 */
export async function storeKey(
  store: Store,
  organizationId: string,
  fields: TestKeyFields = {},
): Promise<ApiKeyRecord> {
  const { apiKey } = await createTestKey(store, organizationId, {
    name: 'sdk test key',
    createdBy: { id: 'user_sdk', type: 'user' },
    ...fields,
  });
  return storedRecord(store, organizationId, apiKey.id);
}

/** The stored record of a key, which must exist. */
export async function storedRecord(store: Store, organizationId: string, id: string): Promise<ApiKeyRecord> {
  const record = await store.getApiKey(organizationId, id);
  if (!record) {
    throw new Error(`no key ${id} in organization ${organizationId}`);
  }
  return record;
}

/** The real ID of an organization's default workspace, as the store holds it. */
export async function defaultWorkspaceOf(store: Store, organizationId: string): Promise<string> {
  const organization = await store.getOrganization(organizationId);
  if (!organization) {
    throw new Error(`no organization ${organizationId}`);
  }
  return organization.defaultWorkspaceId;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})Z$/;

/**
 * A response timestamp (RFC 3339, UTC, six fractional digits, as the spec's `Timestamp` pattern says) as
 * microseconds since the epoch, to compare exactly with the store's `EpochMicros`.
 */
export function timestampMicros(text: string): number {
  const match = TIMESTAMP.exec(text);
  if (!match) {
    throw new Error(`not a Timestamp: ${text}`);
  }
  const [, dateTime, fraction] = match;
  return Date.parse(`${dateTime}Z`) * 1000 + Number(fraction);
}
