import type { EpochMicros } from '../shared-types.js';

/** A key's use to record: its ID, the organization it was used as a key of, and the moment (cut to the minute). */
export interface KeyUse {
  id: string;
  organizationId: string;
  lastUsedAt: EpochMicros;
}

/** When the store's API keys were last used. */
export interface UsageStore {
  /**
   * Records when keys were used, in one statement: each key's `lastUsedAt` becomes the later of the stored value
   * and the given one (so that replicas flushing in any order never move it back). A use naming a key that is not
   * of its `organizationId`, or no key at all, is ignored. Each key appears at most once in `uses`.
   */
  recordKeyUsage(uses: readonly KeyUse[]): Promise<void>;
}
