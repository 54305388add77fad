import type { ApiKeyStatus } from '../api-keys/types.js';
import type { EpochMicros } from '../shared-types.js';

/** A key's use to record: its ID, the organization it was used as a key of, and the moment (cut to the minute). */
export interface KeyUse {
  id: string;
  organizationId: string;
  lastUsedAt: EpochMicros;
}

/** What decides whether a reported use of a key can have been a valid verification: when and what the key is. */
export interface KeyInUse {
  id: string;
  createdAt: EpochMicros;
  status: ApiKeyStatus;
  expiresAt: EpochMicros | null;
}

/** When the store's API keys were last used. */
export interface UsageStore {
  /** The keys of the organization among `ids` (unknown IDs, and other organizations' keys, are left out). */
  findKeysInUse(organizationId: string, ids: readonly string[]): Promise<KeyInUse[]>;
  /**
   * Records when keys were used, in one statement: each key's `lastUsedAt` becomes the later of the stored value
   * and the given one (so that replicas flushing in any order never move it back). A use naming a key that is not
   * of its `organizationId`, or no key at all, is ignored. Each key appears at most once in `uses`.
   */
  recordKeyUsage(uses: readonly KeyUse[]): Promise<void>;
}
