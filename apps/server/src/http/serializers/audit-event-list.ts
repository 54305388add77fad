import type { v2026_10_21 } from '@apikeys/api-types';
import type { AuditEventPage } from '../../domain/audit-events-service.js';
import { toAuditEventJson } from './audit-event.js';
import { pageJson } from './page.js';

type Schemas = v2026_10_21.components['schemas'];

/** A page of the audit trail as `AuditEventList`. */
export function toAuditEventListJson(page: AuditEventPage): Schemas['AuditEventList'] {
  return pageJson(page.events.map(toAuditEventJson), page.hasMore);
}
