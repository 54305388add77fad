import type { ApiKeyRecord, Store } from '@apikeys/store';

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

/**
 * Every key of an organization (up to 1000), newest first, as the store holds them: to prove a request changed
 * nothing.
 */
export async function snapshotKeys(store: Store, organizationId: string): Promise<ApiKeyRecord[]> {
  const result = await store.listApiKeys({ organizationId, limit: 1000 });
  if (result.kind !== 'page') {
    throw new Error('a list without a cursor found no page');
  }
  return result.keys;
}
