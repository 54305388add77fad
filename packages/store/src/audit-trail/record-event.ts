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
  return { name: key.name, status: key.status, expiresAt: 'expiresAt' in key ? (key.expiresAt ?? null) : null };
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
