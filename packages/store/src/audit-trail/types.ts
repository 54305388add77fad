import type { ApiKeyStatus, KeyMetadata } from '../api-keys/types.js';
import type { AdminKeyStatus } from '../credentials/types.js';
import type { AuditActor, AuditClient, EpochMicros, PageCursor } from '../shared-types.js';

/** What an audit event records. */
export type AuditEventType =
  | 'api_key.created'
  | 'api_key.updated'
  | 'api_key.rotated'
  | 'api_key.seeded'
  | 'admin_key.created'
  | 'admin_key.disabled'
  | 'admin_key.enabled'
  | 'organization.created';

/** What an audit event is about, or the other key of a rotation. */
export interface AuditTarget {
  type: 'api_key' | 'admin_key' | 'organization';
  id: string;
}

/** One field's value before and after a change; null where it had none (before a creation, say). */
export interface FieldChange<T> {
  from: T | null;
  to: T | null;
}

/** The fields a change changed; a field it left as it was is absent. */
export interface AuditChanges {
  name?: FieldChange<string>;
  status?: FieldChange<ApiKeyStatus | AdminKeyStatus>;
  expiresAt?: FieldChange<EpochMicros>;
  /** An API key's permission names, the whole list before and after. */
  permissions?: FieldChange<readonly string[]>;
  /** An API key's metadata, the whole object before and after. */
  metadata?: FieldChange<KeyMetadata>;
}

/** A recorded change. Immutable: no store call changes or deletes one. Never holds a secret or its hash. */
export interface AuditEventRecord {
  /** `auditevt_`, 14 hexadecimal digits of `occurredAt`, and 16 random characters: IDs sort as events occurred. */
  id: string;
  type: AuditEventType;
  occurredAt: EpochMicros;
  actor: AuditActor;
  target: AuditTarget;
  changes: AuditChanges;
  /** The other key of a rotation; null otherwise. */
  related: AuditTarget | null;
  /** For `api_key.seeded`, the number of keys seeded; null otherwise. */
  keyCount: number | null;
  requestId: string | null;
  client: AuditClient | null;
}

/** Filters of the audit trail; they combine with AND. */
export interface AuditEventFilters {
  targetId?: string | undefined;
  /** Events of changes made by this admin key. */
  actorId?: string | undefined;
  /** Events of any of these types (a non-empty list). */
  types?: readonly AuditEventType[] | undefined;
  /** Events that occurred strictly after this moment. */
  occurredAfter?: EpochMicros | undefined;
  /** Events that occurred strictly before this moment. */
  occurredBefore?: EpochMicros | undefined;
}

export interface ListAuditEventsQuery {
  organizationId: string;
  limit: number;
  /** A cursor: the ID of an event of the organization, which need not match the filters. */
  cursor?: PageCursor | undefined;
  filters?: AuditEventFilters | undefined;
}

/** What a list of the audit trail found: a page, newest first, or nothing because the cursor names no event. */
export type ListAuditEventsResult =
  | { kind: 'page'; events: AuditEventRecord[]; hasMore: boolean }
  | { kind: 'cursor_not_found' };

/** The store's audit trail, which the other calls write (no call changes or deletes an event). */
export interface AuditTrailStore {
  /** One page of the organization's audit trail, newest first. */
  listAuditEvents(query: ListAuditEventsQuery): Promise<ListAuditEventsResult>;
  getAuditEvent(organizationId: string, id: string): Promise<AuditEventRecord | undefined>;
}
