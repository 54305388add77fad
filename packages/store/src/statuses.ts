import type { ApiKeyRecord, ApiKeyStatus, EffectiveApiKeyStatus, EpochMicros } from './types.js';

// Keyed by the union: a status added to the type fails compilation here until it is listed.
const STATUSES: Record<ApiKeyStatus, true> = { active: true, inactive: true, archived: true };
const EFFECTIVE_STATUSES: Record<EffectiveApiKeyStatus, true> = { ...STATUSES, expired: true };

/** Every API key status. */
export const API_KEY_STATUSES = Object.keys(STATUSES) as readonly ApiKeyStatus[];

/** Every effective API key status: the stored ones and `expired`. */
export const EFFECTIVE_API_KEY_STATUSES = Object.keys(EFFECTIVE_STATUSES) as readonly EffectiveApiKeyStatus[];

/** What a key is at `now`: archived wins, then expired (its expiry is at or before `now`), then the stored status. */
export function effectiveStatus(
  key: Pick<ApiKeyRecord, 'status' | 'expiresAt'>,
  now: EpochMicros,
): EffectiveApiKeyStatus {
  if (key.status === 'archived') {
    return 'archived';
  }
  return key.expiresAt != null && key.expiresAt <= now ? 'expired' : key.status;
}
