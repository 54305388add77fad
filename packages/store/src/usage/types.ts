import type { EpochMicros } from '../shared-types.js';

/** A key's use to record: its ID and the moment (already cut to the minute). */
export interface KeyUse {
  id: string;
  lastUsedAt: EpochMicros;
}

/** When the store's API keys were last used. */
export interface UsageStore {
  /**
   * Records when keys were used, in one statement: each key's `lastUsedAt` becomes the later of the stored value
   * and the given one (so that replicas flushing in any order never move it back).
   */
  recordKeyUsage(uses: readonly KeyUse[]): Promise<void>;
}
