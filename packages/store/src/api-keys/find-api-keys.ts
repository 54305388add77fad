import type { StoreCore } from '../core/store-core.js';
import { byHash } from '../credentials/credential-rows.js';
import { hashesEqual } from '../secrets.js';
import type { ApiKeyRecord, KeyOfSecret } from '../types.js';
import { API_KEY_SELECTION, type ApiKeyValues, apiKeyFromValues, KEY_OF_SECRET_COLUMNS } from './api-key-rows.js';

/** A key of the organization, by its ID. */
export async function getApiKey(
  core: StoreCore,
  organizationId: string,
  id: string,
): Promise<ApiKeyRecord | undefined> {
  const query = core.prepared.get<'organizationId' | 'id'>('API key by id', (slot) =>
    core.db
      .selectFrom('api_keys')
      .select(API_KEY_SELECTION)
      .where('organization_id', '=', slot('organizationId'))
      .where('id', '=', slot('id')),
  );
  const [row] = await core.run(query, { organizationId, id });
  return row && apiKeyFromValues(row as ApiKeyValues);
}

/** The API key whose secret has this hash, in whichever organization: what a verification answers from. */
export async function findApiKeyBySecretHash(core: StoreCore, secretHash: string): Promise<KeyOfSecret | undefined> {
  const [row] = await core.run(byHash(core, 'api_keys', KEY_OF_SECRET_COLUMNS), { hash: secretHash });
  if (!row) {
    return undefined;
  }
  const [organizationId, storedHash, ...values] = row as [string, string, ...ApiKeyValues];
  return hashesEqual(storedHash, secretHash) ? { organizationId, apiKey: apiKeyFromValues(values) } : undefined;
}
