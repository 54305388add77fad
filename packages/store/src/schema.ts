import type {
  AdminKeyStatus,
  ApiKeyScope,
  ApiKeyStatus,
  AuditActor,
  AuditEventType,
  AuditTarget,
  CreatorType,
  EpochMicros,
  Principal,
  VerifierKeyStatus,
} from './types.js';

/** Timestamps are integer microseconds since the Unix epoch in every dialect. */
type Micros = EpochMicros;

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: Micros;
  default_workspace_id: string;
}

export interface AdminKeysTable {
  id: string;
  organization_id: string;
  name: string;
  secret_hash: string;
  partial_key_hint: string;
  status: AdminKeyStatus;
  created_at: Micros;
}

/** Verifier keys: like admin keys, but they may only verify API keys' secrets. */
export interface VerifierKeysTable {
  id: string;
  organization_id: string;
  name: string;
  secret_hash: string;
  partial_key_hint: string;
  status: VerifierKeyStatus;
  created_at: Micros;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  name: string;
  workspace_id: string | null;
  created_at: Micros;
  created_by_id: string;
  created_by_type: CreatorType;
  partial_key_hint: string | null;
  secret_hash: string;
  status: ApiKeyStatus;
  updated_at: Micros;
  /** Null for never. */
  expires_at: Micros | null;
  /** Both null, or both set; a key with organization scope always has them. */
  principal_type: Principal['type'] | null;
  principal_id: string | null;
  /** `organization`: no workspace (`workspace_id` null) and a principal. With `workspace`, null is the default one. */
  scope: ApiKeyScope;
  /** The key's permission names, as a JSON array, in the order given (migration 0010). */
  permissions: string;
  /** The organization's metadata of the key, as the JSON object text it was given in. */
  metadata: string;
}

/** Every column of `api_keys`, in one fixed order (for inserts by position); a new column fails compilation here. */
export const API_KEYS_TABLE_COLUMNS = Object.keys({
  id: true,
  organization_id: true,
  name: true,
  workspace_id: true,
  created_at: true,
  created_by_id: true,
  created_by_type: true,
  partial_key_hint: true,
  secret_hash: true,
  status: true,
  updated_at: true,
  expires_at: true,
  principal_type: true,
  principal_id: true,
  scope: true,
  permissions: true,
  metadata: true,
} satisfies Record<keyof ApiKeysTable, true>) as (keyof ApiKeysTable)[];

/**
 * An audit event (migration 0005): `name`, `status` and `expires_at` of its target before and after the change,
 * null where there was no value (before a creation, say).
 */
export interface AuditEventsTable {
  organization_id: string;
  id: string;
  occurred_at: Micros;
  type: AuditEventType;
  actor_type: AuditActor['type'];
  /** The admin key's ID; null for an operator. */
  actor_id: string | null;
  /** The operator's OS user name, when known; null for an admin key. */
  actor_name: string | null;
  target_type: AuditTarget['type'];
  target_id: string;
  name_before: string | null;
  name_after: string | null;
  status_before: ApiKeyStatus | AdminKeyStatus | null;
  status_after: ApiKeyStatus | AdminKeyStatus | null;
  expires_at_before: Micros | null;
  expires_at_after: Micros | null;
  related_type: AuditTarget['type'] | null;
  related_id: string | null;
  key_count: number | null;
  request_id: string | null;
  client_ip: string | null;
  client_user_agent: string | null;
  /** An API key's permissions (JSON array) and metadata (JSON object) before and after (migration 0010). */
  permissions_before: string | null;
  permissions_after: string | null;
  metadata_before: string | null;
  metadata_after: string | null;
}

/** Every column of `audit_events`, in one fixed order (for inserts by position). */
export const AUDIT_EVENTS_TABLE_COLUMNS = Object.keys({
  organization_id: true,
  id: true,
  occurred_at: true,
  type: true,
  actor_type: true,
  actor_id: true,
  actor_name: true,
  target_type: true,
  target_id: true,
  name_before: true,
  name_after: true,
  status_before: true,
  status_after: true,
  expires_at_before: true,
  expires_at_after: true,
  related_type: true,
  related_id: true,
  key_count: true,
  request_id: true,
  client_ip: true,
  client_user_agent: true,
  permissions_before: true,
  permissions_after: true,
  metadata_before: true,
  metadata_after: true,
} satisfies Record<keyof AuditEventsTable, true>) as (keyof AuditEventsTable)[];

/** The database as Kysely sees it. */
export interface DatabaseSchema {
  organizations: OrganizationsTable;
  admin_keys: AdminKeysTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  verifier_keys: VerifierKeysTable;
  api_key_usage: ApiKeyUsageTable;
  api_key_permissions: ApiKeyPermissionsTable;
}

/** One permission a key holds, in list page order (kept by triggers from `api_keys.permissions`; migration 0010). */
export interface ApiKeyPermissionsTable {
  organization_id: string;
  permission: string;
  created_at: Micros;
  api_key_id: string;
}

/** When a key was last verified as valid (minute resolution); a key never used has no row. */
export interface ApiKeyUsageTable {
  api_key_id: string;
  last_used_at: Micros;
}

/** The tables that bulk seeding fills, by the type of their rows. */
export interface BulkTables {
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
}

export type BulkTable = keyof BulkTables;

/** The columns of a bulk-filled table, in the order rows are inserted by position. */
export function bulkColumns(table: BulkTable): readonly string[] {
  return table === 'api_keys' ? API_KEYS_TABLE_COLUMNS : AUDIT_EVENTS_TABLE_COLUMNS;
}
