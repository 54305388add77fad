import type { ApiKey, ApiKeyStatus, CreatedBy } from '@apikeys/api-types';
import { type ApiKeyScope, type EpochMicros, nowMicros, type Principal, type Store } from '@apikeys/store';
import { toApiKeyJson } from '../src/http/serializers/index.js';

/** An organization of its own, so that a test's data never meets another test's. */
export interface TestOrganization {
  id: string;
  /** The secret of an active admin key of the organization. */
  adminKey: string;
  adminKeyId: string;
}

/** Creates an organization with an active admin key. */
export async function createTestOrganization(store: Store, name = 'test organization'): Promise<TestOrganization> {
  const organization = await store.createOrganization(name);
  const { adminKey, secret } = await store.createAdminKey({ organizationId: organization.id, name: 'admin' });
  return { id: organization.id, adminKey: secret, adminKeyId: adminKey.id };
}

/** Fields of a key to create; everything has a default. */
export interface KeyFields {
  name?: string;
  workspaceId?: string | null;
  createdBy?: CreatedBy;
  status?: ApiKeyStatus;
  /** When the key expires (API versions with expiry); never unless given. */
  expiresAt?: EpochMicros | null;
  principal?: Principal | null;
  /** `organization` needs a `principal` and no `workspaceId`. */
  scope?: ApiKeyScope;
}

/** Creates an API key directly in the store; returns it as the API shows it, with its secret. */
export async function createKey(
  store: Store,
  organizationId: string,
  fields: KeyFields = {},
): Promise<{ apiKey: ApiKey; secret: string }> {
  const { apiKey, secret } = await store.createApiKey({
    organizationId,
    name: fields.name ?? 'test key',
    workspaceId: fields.workspaceId ?? null,
    createdBy: fields.createdBy ?? { id: 'user_test', type: 'user' },
    status: fields.status ?? 'active',
    expiresAt: fields.expiresAt ?? null,
    principal: fields.principal ?? null,
    scope: fields.scope,
  });
  return { apiKey: toApiKeyJson(apiKey, nowMicros()), secret };
}

/** A key as the API shows it, read straight from the store; undefined when the organization has no such key. */
export async function storedKey(store: Store, organizationId: string, id: string): Promise<ApiKey | undefined> {
  const key = await store.getApiKey(organizationId, id);
  return key && toApiKeyJson(key, nowMicros());
}

/** Every key of an organization (up to 1000) as the API shows them, to prove a request changed nothing. */
export async function snapshotKeys(store: Store, organizationId: string): Promise<ApiKey[]> {
  const result = await store.listApiKeys({ organizationId, limit: 1000 });
  if (result.kind !== 'page') {
    throw new Error('a list without a cursor found no page');
  }
  return result.keys.map(toApiKeyJson);
}
