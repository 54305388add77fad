import type { CoreCalls } from '../core/core-calls.js';
import type { StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import type { KeyUse, UsageStore } from '../types.js';

/** Records when keys were used (see `UsageStore.recordKeyUsage`). */
export async function recordKeyUsage(core: StoreCore, uses: readonly KeyUse[]): Promise<void> {
  if (uses.length === 0) {
    return;
  }
  // One statement whatever the number of keys: arrays on PostgreSQL, a JSON object on SQLite.
  const statement = isPostgres(core.db)
    ? {
        sql: `insert into api_key_usage (api_key_id, last_used_at)
            select * from unnest($1::text[], $2::bigint[])
            on conflict (api_key_id) do update
            set last_used_at = greatest(api_key_usage.last_used_at, excluded.last_used_at)`,
        parameters: [uses.map((use) => use.id), uses.map((use) => use.lastUsedAt)],
      }
    : {
        sql: `insert into api_key_usage (api_key_id, last_used_at)
            select key, value from json_each(?) where true
            on conflict (api_key_id) do update set last_used_at = max(last_used_at, excluded.last_used_at)`,
        parameters: [JSON.stringify(Object.fromEntries(uses.map((use) => [use.id, use.lastUsedAt])))],
      };
  await core.adapter.writeRows([statement]);
}

/** The calls of `UsageStore`. */
export const USAGE_CALLS = { recordKeyUsage } satisfies CoreCalls<UsageStore>;
