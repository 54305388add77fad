import { sql } from 'kysely';
import type { CoreCalls } from '../core/core-calls.js';
import { pageOf } from '../core/page.js';
import type { StoreCore } from '../core/store-core.js';
import { AUDIT_EVENTS_TABLE_COLUMNS } from '../schema.js';
import type { AuditEventRecord, AuditTrailStore, ListAuditEventsQuery, ListAuditEventsResult } from '../types.js';
import { idAfter, idBefore, toAuditEvent } from './audit-events.js';

/** The values a page of the audit trail takes. */
type AuditPageSlot = 'organizationId' | 'targetId' | 'actorId' | 'idAbove' | 'idBelow' | 'cursorId' | 'limitPlusOne';

/** Maps an event's column values, in the order of `AUDIT_EVENTS_TABLE_COLUMNS`, to a record. */
function auditEventFromValues(values: unknown[]): AuditEventRecord {
  return toAuditEvent(Object.fromEntries(AUDIT_EVENTS_TABLE_COLUMNS.map((column, i) => [column, values[i]])) as never);
}

/** One page of the organization's audit trail, newest first. */
export async function listAuditEvents(
  core: StoreCore,
  { organizationId, limit, cursor, filters = {} }: ListAuditEventsQuery,
): Promise<ListAuditEventsResult> {
  const { targetId, actorId, types, occurredAfter, occurredBefore } = filters;
  if (types !== undefined && types.length === 0) {
    throw new TypeError('the type filter needs one or more types');
  }
  // Every bound is a bound on IDs, which sort as events occurred: the time filters' and the cursor's.
  const idAbove = occurredAfter === undefined ? undefined : idAfter(occurredAfter);
  const idBelow = occurredBefore === undefined ? undefined : idBefore(occurredBefore);
  const backwards = cursor?.direction === 'before';
  const typeList = types === undefined ? [undefined] : [...new Set(types)].sort();
  const shape = [
    'audit page',
    targetId !== undefined,
    actorId !== undefined,
    typeList.join('+'),
    idAbove !== undefined,
    idBelow !== undefined,
    cursor?.direction,
  ].join(':');
  const query = core.prepared.get<AuditPageSlot>(shape, (slot) => {
    const order = backwards ? 'asc' : 'desc';
    // One ordered range scan per type, merged: an index of (organization, type, id) serves each type in page order.
    const pageOfType = (type: string | undefined) => {
      let select = core.db
        .selectFrom('audit_events')
        .select(AUDIT_EVENTS_TABLE_COLUMNS)
        .where('organization_id', '=', slot('organizationId'));
      if (targetId !== undefined) {
        select = select.where('target_id', '=', slot('targetId'));
      }
      if (actorId !== undefined) {
        select = select.where('actor_id', '=', slot('actorId'));
      }
      if (type !== undefined) {
        select = select.where('type', '=', sql.lit(type) as never);
      }
      if (idAbove !== undefined) {
        select = select.where('id', '>', slot('idAbove'));
      }
      if (idBelow !== undefined) {
        select = select.where('id', '<', slot('idBelow'));
      }
      if (cursor) {
        // The cursor's own ID, read in the same statement: no event of the organization has it when it is null,
        // and then the page is empty (an index-only probe; told apart from an empty page below).
        const anchor = core.db
          .selectFrom('audit_events')
          .select('id')
          .where('organization_id', '=', slot('organizationId'))
          .where('id', '=', slot('cursorId'));
        select = select.where('id', backwards ? '>' : '<', anchor);
      }
      return select.orderBy('id', order).limit(slot('limitPlusOne'));
    };
    const [first, ...others] = typeList.map(pageOfType);
    if (!first || others.length === 0) {
      return first ?? pageOfType(undefined);
    }
    const merged = others.reduce(
      (union, page) => union.unionAll(core.db.selectFrom(page.as('page')).selectAll()),
      core.db.selectFrom(first.as('page')).selectAll(),
    );
    return core.db.selectFrom(merged.as('pages')).selectAll().orderBy('id', order).limit(slot('limitPlusOne'));
  });
  const rows = await core.run(query, {
    organizationId,
    targetId,
    actorId,
    idAbove,
    idBelow,
    cursorId: cursor?.id,
    limitPlusOne: limit + 1,
  });
  if (cursor && rows.length === 0 && !(await auditEventExists(core, organizationId, cursor.id))) {
    return { kind: 'cursor_not_found' };
  }
  const { page, hasMore } = pageOf(rows, limit, backwards);
  return { kind: 'page', events: page.map(auditEventFromValues), hasMore };
}

/** Whether the organization has an event of this ID: an index-only probe. */
async function auditEventExists(core: StoreCore, organizationId: string, id: string): Promise<boolean> {
  const query = core.prepared.get<'organizationId' | 'id'>('audit event exists', (slot) =>
    core.db
      .selectFrom('audit_events')
      .select('id')
      .where('organization_id', '=', slot('organizationId'))
      .where('id', '=', slot('id')),
  );
  return (await core.run(query, { organizationId, id })).length > 0;
}

/** One event of the organization's trail, by its ID. */
export async function getAuditEvent(
  core: StoreCore,
  organizationId: string,
  id: string,
): Promise<AuditEventRecord | undefined> {
  const query = core.prepared.get<'organizationId' | 'id'>('audit event by id', (slot) =>
    core.db
      .selectFrom('audit_events')
      .select(AUDIT_EVENTS_TABLE_COLUMNS)
      .where('organization_id', '=', slot('organizationId'))
      .where('id', '=', slot('id')),
  );
  const [row] = await core.run(query, { organizationId, id });
  return row && auditEventFromValues(row);
}

/** The calls of `AuditTrailStore`. */
export const AUDIT_TRAIL_CALLS = { listAuditEvents, getAuditEvent } satisfies CoreCalls<AuditTrailStore>;
