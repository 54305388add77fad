import type { ApiKeyRecord, ChangeContext, NewApiKey, Store } from '../src/index.js';

/** The fields of a test key that the test chooses; every one has a default. */
export type TestKeyFields = Partial<Omit<NewApiKey, 'organizationId'>>;

/** Who creates a test key unless the test says otherwise. */
export const TEST_KEY_CREATOR = { id: 'user_test', type: 'user' } as const;

/**
 * Creates an API key of `organizationId` directly in the store: named `test key`, created by `user_test`, active, in
 * the default workspace, with no expiry and no principal unless `fields` says otherwise. Returns the store's record
 * and the secret; a test that needs the key as the API shows it serializes the record itself.
 */
export async function createTestKey(
  store: Store,
  organizationId: string,
  fields: TestKeyFields = {},
  changes?: ChangeContext,
): Promise<{ apiKey: ApiKeyRecord; secret: string }> {
  const { apiKey, secret } = await store.createApiKey(
    {
      organizationId,
      name: 'test key',
      workspaceId: null,
      createdBy: TEST_KEY_CREATOR,
      status: 'active',
      expiresAt: null,
      principal: null,
      ...fields,
    },
    changes,
  );
  return { apiKey, secret };
}
