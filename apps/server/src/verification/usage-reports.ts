import { type EpochMicros, effectiveStatus, type Store } from '@apikeys/store';

/** How far past the server's clock a reported use may lie (gateways' clocks drift): counted as now. */
export const USE_CLOCK_SKEW_MICROS = 60_000_000;

/** One use a gateway reports: the key's ID and when it found the key valid. */
export interface ReportedUse {
  apiKeyId: string;
  usedAt: EpochMicros;
}

/** What became of a report: how many uses it held, and how many of them do not count. */
export interface UsageReceipt {
  received: number;
  ignored: number;
}

/**
 * The reports of uses that gateways answered from their memory (`reportKeyUsage`). Only a use a gateway could have
 * seen counts: of a key of the caller's organization (another organization's key is like an unknown one), active and
 * unexpired at the time of the use, no earlier than the key's creation, and no later than the server's clock plus
 * `USE_CLOCK_SKEW_MICROS` (a use between now and then counts as now). The others are ignored and counted. What
 * counts is noted like the server's own verifications.
 */
export class UsageReports {
  constructor(
    private readonly store: Pick<Store, 'findKeysInUse'>,
    private readonly usage: { record(keyId: string, organizationId: string, usedAt: EpochMicros): void } | undefined,
  ) {}

  /**
   * Notes the uses of `organizationId`'s keys that count, as of `now`; says how many were ignored. The keys are
   * read in a few statements with turns of the event loop between them (the HTTP layer serves reports one at a time:
   * `ONE_AT_A_TIME`).
   */
  async report(organizationId: string, uses: readonly ReportedUse[], now: EpochMicros): Promise<UsageReceipt> {
    const keys = new Map(
      (
        await this.store.findKeysInUse(
          organizationId,
          uses.map((use) => use.apiKeyId),
        )
      ).map((key) => [key.id, key]),
    );
    let ignored = 0;
    for (const { apiKeyId, usedAt } of uses) {
      const key = keys.get(apiKeyId);
      const at = Math.min(usedAt, now);
      const possible =
        key !== undefined &&
        usedAt <= now + USE_CLOCK_SKEW_MICROS &&
        at >= key.createdAt &&
        effectiveStatus(key, at) === 'active';
      if (possible) {
        this.usage?.record(apiKeyId, organizationId, at);
      } else {
        ignored += 1;
      }
    }
    return { received: uses.length, ignored };
  }
}
