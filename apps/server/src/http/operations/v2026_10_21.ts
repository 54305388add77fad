import type { Readiness } from '../../health/readiness.js';
import type { OperationHandlers } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { createApiKey } from './create-api-key.js';
import { getApiKey } from './get-api-key.js';
import { getAuditEvent } from './get-audit-event.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';
import { listApiKeys } from './list-api-keys.js';
import { listAuditEvents } from './list-audit-events.js';
import { reportKeyUsage } from './report-key-usage.js';
import { rotateApiKey } from './rotate-api-key.js';
import type { Services } from './services.js';
import { streamKeyChanges } from './stream-key-changes.js';
import { updateApiKey } from './update-api-key.js';
import { verifyApiKey } from './verify-api-key.js';

/** The handlers of API version `v2026_10_21`, by operationId (each in `<operation-id>.ts`). */
export function v2026_10_21Handlers(services: Services, readiness: Readiness): OperationHandlers<V2026_10_21> {
  return {
    getHealth: getHealth(),
    getReadiness: getReadiness(readiness),
    listApiKeys: listApiKeys.v2026_10_21(services),
    getApiKey: getApiKey.v2026_10_21(services),
    updateApiKey: updateApiKey.v2026_10_21(services),
    createApiKey: createApiKey.v2026_10_21(services),
    rotateApiKey: rotateApiKey.v2026_10_21(services),
    listAuditEvents: listAuditEvents.v2026_10_21(services),
    getAuditEvent: getAuditEvent.v2026_10_21(services),
    verifyApiKey: verifyApiKey.v2026_10_21(services),
    streamKeyChanges: streamKeyChanges.v2026_10_21(services),
    reportKeyUsage: reportKeyUsage.v2026_10_21(services),
  };
}
