import { toAuditEventListJson } from '../serializers/audit-event-list.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { microsOf } from './request-values.js';
import type { Services } from './services.js';

/** `listAuditEvents` (from version `v2026_10_21`): one page of the organization's audit trail, newest first. */
export const listAuditEvents = {
  v2026_10_21:
    ({ auditEvents }: Services): OperationHandler<V2026_10_21, 'listAuditEvents'> =>
    async ({ caller, query }) => {
      const page = await auditEvents.listAuditEvents(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          targetId: query.target_id,
          actorId: query.actor_id,
          types: query.type,
          occurredAfter: microsOf('occurred_after', query.occurred_after),
          occurredBefore: microsOf('occurred_before', query.occurred_before),
        },
      });
      return toAuditEventListJson(page);
    },
};
