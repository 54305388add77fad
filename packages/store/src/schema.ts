import type { AdminKeyStatus, ApiKeyScope, ApiKeyStatus, CreatorType, EpochMicros, Principal } from './types.js';

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
} satisfies Record<keyof ApiKeysTable, true>) as (keyof ApiKeysTable)[];

/** The database as Kysely sees it. */
export interface DatabaseSchema {
  organizations: OrganizationsTable;
  admin_keys: AdminKeysTable;
  api_keys: ApiKeysTable;
}
