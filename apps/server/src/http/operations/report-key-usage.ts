import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { microsOf } from './request-values.js';
import type { Services } from './services.js';

/**
 * `reportKeyUsage` (from version `v2026_10_21`): uses of keys a gateway found valid from its memory, noted like this
 * server's own verifications when a gateway could have seen them (`UsageReports`); the others are ignored and counted.
 */
export const reportKeyUsage = {
  v2026_10_21:
    ({ usageReports, clock }: Services): OperationHandler<V2026_10_21, 'reportKeyUsage'> =>
    async ({ caller, body }) => {
      // Read whole before any is noted: a report with one impossible time (a February 30th) notes nothing.
      const uses = body.uses.map((use, index) => ({
        apiKeyId: use.api_key_id,
        usedAt: microsOf(`uses[${index}].used_at`, use.used_at),
      }));
      return usageReports.report(caller.organizationId, uses, clock());
    },
};
