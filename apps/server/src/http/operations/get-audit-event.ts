import { toAuditEventJson } from '../serializers/audit-event.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import type { Services } from './services.js';

/** `getAuditEvent` (from version `v2026_10_21`): one event of the organization's audit trail. */
export const getAuditEvent = {
  v2026_10_21:
    ({ auditEvents }: Services): OperationHandler<V2026_10_21, 'getAuditEvent'> =>
    async ({ caller, path }) =>
      toAuditEventJson(await auditEvents.getAuditEvent(caller.organizationId, path.audit_event_id)),
};
