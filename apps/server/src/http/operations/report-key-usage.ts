import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { microsOf } from './request-values.js';
import type { Services } from './services.js';

/**
 * `reportKeyUsage` (from version `v2026_10_21`): uses of keys a gateway found valid from its memory, noted like this
 * server's own verifications. A use after now counts as now; the store ignores another organization's keys.
 */
export const reportKeyUsage = {
  v2026_10_21:
    ({ usage, clock }: Services): OperationHandler<V2026_10_21, 'reportKeyUsage'> =>
    async ({ caller, body }) => {
      const now = clock();
      // Read whole before any is noted: a report with one impossible time (a February 30th) notes nothing.
      const uses = body.uses.map((use, index) => ({
        id: use.api_key_id,
        usedAt: Math.min(microsOf(`uses[${index}].used_at`, use.used_at), now),
      }));
      for (const { id, usedAt } of uses) {
        usage?.record(id, caller.organizationId, usedAt);
      }
      return { received: body.uses.length };
    },
};
