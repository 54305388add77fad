import type { StoreCore } from '../core/store-core.js';
import type { AdminKeyRecord, ApiKeyRecord, AuditTarget, ChangeContext } from '../types.js';
import { type EventFacts, eventRow, NOTHING, type RecordedFields } from './audit-events.js';

/**
 * Records an event; called inside the transaction of its change, after the change (and any lock it took), so that
 * the events of one key are in the order its changes were made.
 */
export async function recordEvent(core: StoreCore, facts: EventFacts, context: ChangeContext): Promise<void> {
  const occurredAt = facts.occurredAt ?? (await core.currentTime());
  await core.db
    .insertInto('audit_events')
    .values(eventRow({ ...facts, occurredAt }, context))
    .execute();
}

/** The fields of a key that audit events record. */
export function recordedFields(key: ApiKeyRecord | AdminKeyRecord): RecordedFields {
  const fields: RecordedFields = {
    name: key.name,
    status: key.status,
    expiresAt: 'expiresAt' in key ? (key.expiresAt ?? null) : null,
  };
  if ('permissions' in key && key.permissions !== undefined && key.permissions.length > 0) {
    fields.permissions = JSON.stringify(key.permissions);
  }
  if ('metadata' in key && key.metadata !== undefined && Object.keys(key.metadata).length > 0) {
    fields.metadata = JSON.stringify(key.metadata);
  }
  return fields;
}

/** What a creation records: the new item (`target`), what it is (`after`), and the key it replaces, if any. */
export interface Creation {
  organizationId: string;
  target: AuditTarget;
  after: RecordedFields;
  related?: AuditTarget | undefined;
}

/** Records the creation of an item (`<type>.created`): it had nothing before. */
export function recordCreation(core: StoreCore, creation: Creation, context: ChangeContext): Promise<void> {
  const { organizationId, target, after, related } = creation;
  return recordEvent(
    core,
    { organizationId, type: `${target.type}.created`, target, before: NOTHING, after, related },
    context,
  );
}
