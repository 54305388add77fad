import type { AuditEventFilters, AuditEventRecord, Store } from '@apikeys/store';
import { type CursorParams, notFound, pageCursor, unknownCursor } from './page-cursor.js';

/** What `listAuditEvents` takes: a page size, at most one cursor, and filters. */
export interface ListAuditEventsParams extends CursorParams {
  limit: number;
  filters: AuditEventFilters;
}

/** One page of the audit trail, newest first. */
export interface AuditEventPage {
  events: AuditEventRecord[];
  hasMore: boolean;
}

/** Reads the audit trail of one organization; each method is named after its operationId. */
export class AuditEventsService {
  constructor(private readonly store: Store) {}

  /** One page of events. A cursor must name an event of the organization (which need not match the filters). */
  async listAuditEvents(organizationId: string, params: ListAuditEventsParams): Promise<AuditEventPage> {
    const cursor = pageCursor(params);
    const result = await this.store.listAuditEvents({
      organizationId,
      limit: params.limit,
      cursor,
      filters: params.filters,
    });
    if (result.kind === 'cursor_not_found') {
      throw unknownCursor(cursor, 'audit event');
    }
    return { events: result.events, hasMore: result.hasMore };
  }

  async getAuditEvent(organizationId: string, id: string): Promise<AuditEventRecord> {
    const event = await this.store.getAuditEvent(organizationId, id);
    if (!event) {
      throw notFound('audit_event_id', 'audit event', id);
    }
    return event;
  }
}
