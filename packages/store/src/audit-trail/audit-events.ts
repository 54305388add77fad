import { randomBase62 } from '../random.js';
import type { AuditEventsTable } from '../schema.js';
import { nowMicros } from '../time.js';
import type {
  AdminKeyStatus,
  ApiKeyStatus,
  AuditChanges,
  AuditEventRecord,
  AuditEventType,
  AuditTarget,
  ChangeContext,
  EpochMicros,
  FieldChange,
} from '../types.js';

/** The context of a change made without one: an operator's, whose name is not known. */
export const OPERATOR_CHANGES: ChangeContext = { actor: { type: 'operator', name: null } };

/** What every event ID starts with. */
export const AUDIT_EVENT_ID_PREFIX = 'auditevt_';
/** Hexadecimal digits of the time in an ID: microseconds up to the year 4253. */
export const AUDIT_EVENT_TIME_DIGITS = 14;
const RANDOM_CHARACTERS = 16;

/** The time part of an event ID: `occurredAt` as fixed-width hexadecimal, so that IDs sort by time. */
function timePart(occurredAt: EpochMicros): string {
  return Math.max(0, Math.trunc(occurredAt)).toString(16).padStart(AUDIT_EVENT_TIME_DIGITS, '0');
}

/** The random end of an event ID, which orders the events of one microsecond. */
export function auditEventIdSuffix(): string {
  return randomBase62(RANDOM_CHARACTERS);
}

/** A new event ID: `auditevt_`, the time it occurred (14 hexadecimal digits), and a random suffix. */
export function newAuditEventId(occurredAt: EpochMicros): string {
  return `${AUDIT_EVENT_ID_PREFIX}${timePart(occurredAt)}${auditEventIdSuffix()}`;
}

/**
 * Bounds on event IDs for a time filter: every event that occurred strictly after `occurredAfter` has an ID above
 * the first bound, and every one that occurred strictly before `occurredBefore` an ID below the second. ('0' is the
 * lowest character of IDs, and '~' sorts above them all.)
 */
export function idAfter(occurredAfter: EpochMicros): string {
  return `${AUDIT_EVENT_ID_PREFIX}${timePart(occurredAfter)}~`;
}

export function idBefore(occurredBefore: EpochMicros): string {
  return `${AUDIT_EVENT_ID_PREFIX}${timePart(occurredBefore)}`;
}

/** The fields of a key (or admin key, or organization) that events record before and after a change. */
export interface RecordedFields {
  name: string | null;
  status: ApiKeyStatus | AdminKeyStatus | null;
  expiresAt: EpochMicros | null;
  /** An API key's permissions as JSON text (as `api_keys.permissions` holds them); null for none recorded. */
  permissions?: string | null | undefined;
  /** An API key's metadata as JSON text (as `api_keys.metadata` holds it); null for none recorded. */
  metadata?: string | null | undefined;
}

/** The recorded fields of something that did not exist yet. */
export const NOTHING: RecordedFields = { name: null, status: null, expiresAt: null };

/** What an event row says besides its context. */
export interface EventFacts {
  organizationId: string;
  type: AuditEventType;
  target: AuditTarget;
  before: RecordedFields;
  after: RecordedFields;
  related?: AuditTarget | undefined;
  keyCount?: number | undefined;
  occurredAt?: EpochMicros | undefined;
}

/** The columns of an event's context: who made the change, through which request. */
export function contextColumns(
  context: ChangeContext,
): Pick<AuditEventsTable, 'actor_type' | 'actor_id' | 'actor_name' | 'request_id' | 'client_ip' | 'client_user_agent'> {
  const { actor } = context;
  return {
    actor_type: actor.type,
    actor_id: actor.type === 'admin_key' ? actor.id : null,
    actor_name: actor.type === 'operator' ? actor.name : null,
    request_id: context.requestId ?? null,
    client_ip: context.client?.ipAddress ?? null,
    client_user_agent: context.client?.userAgent ?? null,
  };
}

/** The row of an event. */
export function eventRow(facts: EventFacts, context: ChangeContext): AuditEventsTable {
  const occurredAt = facts.occurredAt ?? nowMicros();
  return {
    organization_id: facts.organizationId,
    id: newAuditEventId(occurredAt),
    occurred_at: occurredAt,
    type: facts.type,
    ...contextColumns(context),
    target_type: facts.target.type,
    target_id: facts.target.id,
    name_before: facts.before.name,
    name_after: facts.after.name,
    status_before: facts.before.status,
    status_after: facts.after.status,
    expires_at_before: facts.before.expiresAt,
    expires_at_after: facts.after.expiresAt,
    permissions_before: facts.before.permissions ?? null,
    permissions_after: facts.after.permissions ?? null,
    metadata_before: facts.before.metadata ?? null,
    metadata_after: facts.after.metadata ?? null,
    related_type: facts.related?.type ?? null,
    related_id: facts.related?.id ?? null,
    key_count: facts.keyCount ?? null,
  };
}

/** Column values as drivers return them: bigints may arrive as strings. */
type Loose<Row> = { [Column in keyof Row]: Row[Column] | (Row[Column] extends number | null ? string : never) };

/** A recorded JSON value (permissions, metadata), or null. */
const parsed = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

const micros = (value: number | string | null): EpochMicros | null => (value === null ? null : Number(value));

function fieldChange<T>(from: T | null, to: T | null): FieldChange<T> | undefined {
  return from === to ? undefined : { from, to };
}

/** Maps an event row to a record; its changes are the recorded fields that differ before and after. */
export function toAuditEvent(row: Loose<AuditEventsTable>): AuditEventRecord {
  const changes: AuditChanges = {};
  const name = fieldChange(row.name_before, row.name_after);
  const status = fieldChange(row.status_before, row.status_after);
  const expiresAt = fieldChange(micros(row.expires_at_before), micros(row.expires_at_after));
  if (name) {
    changes.name = name;
  }
  if (status) {
    changes.status = status;
  }
  if (expiresAt) {
    changes.expiresAt = expiresAt;
  }
  const permissions = fieldChange(row.permissions_before, row.permissions_after);
  if (permissions) {
    changes.permissions = { from: parsed(permissions.from), to: parsed(permissions.to) };
  }
  const metadata = fieldChange(row.metadata_before, row.metadata_after);
  if (metadata) {
    changes.metadata = { from: parsed(metadata.from), to: parsed(metadata.to) };
  }
  return {
    id: row.id,
    type: row.type,
    occurredAt: Number(row.occurred_at),
    actor:
      row.actor_type === 'admin_key'
        ? { type: 'admin_key', id: row.actor_id ?? '' }
        : { type: 'operator', name: row.actor_name },
    target: { type: row.target_type, id: row.target_id },
    changes,
    related:
      row.related_type === null || row.related_id === null ? null : { type: row.related_type, id: row.related_id },
    keyCount: row.key_count === null ? null : Number(row.key_count),
    requestId: row.request_id,
    client:
      row.client_ip === null && row.client_user_agent === null
        ? null
        : { ipAddress: row.client_ip, userAgent: row.client_user_agent },
  };
}
