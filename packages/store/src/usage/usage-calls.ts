import type { CoreCalls } from '../core/core-calls.js';
import type { StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import type { KeyUse, UsageStore } from '../types.js';

/** Records when keys were used (see `UsageStore.recordKeyUsage`). */
export async function recordKeyUsage(core: StoreCore, uses: readonly KeyUse[]): Promise<void> {
  if (uses.length === 0) {
    return;
  }
  // One statement whatever the number of keys: arrays on PostgreSQL, a JSON array on SQLite. The join keeps only
  // the uses of keys of their organization: another's key or an unknown ID is dropped, never failing the rest.
  const statement = isPostgres(core.db)
    ? {
        sql: `insert into api_key_usage (api_key_id, last_used_at)
            select k.id, u.last_used_at
            from unnest($1::text[], $2::text[], $3::bigint[]) as u(id, organization_id, last_used_at)
            join api_keys k on k.id = u.id and k.organization_id = u.organization_id
            on conflict (api_key_id) do update
            set last_used_at = greatest(api_key_usage.last_used_at, excluded.last_used_at)`,
        parameters: [
          uses.map((use) => use.id),
          uses.map((use) => use.organizationId),
          uses.map((use) => use.lastUsedAt),
        ],
      }
    : {
        sql: `insert into api_key_usage (api_key_id, last_used_at)
            select k.id, json_extract(u.value, '$[2]')
            from json_each(?) u
            join api_keys k
              on k.id = json_extract(u.value, '$[0]') and k.organization_id = json_extract(u.value, '$[1]')
            where true
            on conflict (api_key_id) do update set last_used_at = max(last_used_at, excluded.last_used_at)`,
        parameters: [JSON.stringify(uses.map((use) => [use.id, use.organizationId, use.lastUsedAt]))],
      };
  await core.adapter.writeRows([statement]);
}

/** The calls of `UsageStore`. */
export const USAGE_CALLS = { recordKeyUsage } satisfies CoreCalls<UsageStore>;
