import type { Kysely } from 'kysely';
import { newId, randomHex } from '../src/random.js';
import { API_KEY_STATUSES } from '../src/statuses.js';

/** An API key row of the schema before 0004: no expiry, no principal, no scope; null for the default workspace. */
export interface LegacyKeyRow {
  id: string;
  organization_id: string;
  name: string;
  workspace_id: string | null;
  created_at: number;
  created_by_id: string;
  created_by_type: 'user';
  partial_key_hint: string | null;
  secret_hash: string;
  status: (typeof API_KEY_STATUSES)[number];
  updated_at: number;
}

/**
 * Inserts `count` keys straight into a database migrated to 0001, 0002 or 0003 (which the store no longer runs on),
 * one millisecond apart: every third status, workspace and user; every fourth key in the default workspace.
 */
export async function insertLegacyKeys(
  db: Kysely<unknown>,
  organizationId: string,
  count: number,
): Promise<LegacyKeyRow[]> {
  const start = 1_700_000_000_000_000;
  const rows: LegacyKeyRow[] = Array.from({ length: count }, (_, i) => ({
    id: newId('apikey'),
    organization_id: organizationId,
    name: `legacy key ${i}`,
    workspace_id: i % 4 === 0 ? null : `wrkspc_seed${i % 3}`,
    created_at: start + i * 1000,
    created_by_id: `user_seed${i % 3}`,
    created_by_type: 'user',
    partial_key_hint: null,
    secret_hash: randomHex(32),
    status: API_KEY_STATUSES[i % API_KEY_STATUSES.length] ?? 'active',
    updated_at: start + i * 1000,
  }));
  const legacy = db as Kysely<{ api_keys: LegacyKeyRow }>;
  for (let from = 0; from < rows.length; from += 500) {
    await legacy
      .insertInto('api_keys')
      .values(rows.slice(from, from + 500))
      .execute();
  }
  return rows;
}
