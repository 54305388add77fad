/** Integer microseconds since the Unix epoch: exact, portable between engines and cheap to compare. */
export type EpochMicros = number;

/** `active` keys authenticate requests; `inactive` keys are switched off; `archived` keys are kept for the record. */
export type ApiKeyStatus = 'active' | 'inactive' | 'archived';

/** Whether an admin key may call the admin API. */
export type AdminKeyStatus = 'active' | 'disabled';

/** The kind of actor that created an API key. */
export type CreatorType = 'user' | 'service_account';

/** The actor that created an API key. */
export interface Creator {
  id: string;
  type: CreatorType;
}

/** An organization: the tenant every admin key and API key belongs to. */
export interface OrganizationRecord {
  id: string;
  name: string;
}

/** An admin key as stored: never the secret, only what identifies and describes it. */
export interface AdminKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: AdminKeyStatus;
}

/** An API key as stored, without its secret (only its hash is stored, and never leaves the store). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Null for the organization's default workspace. */
  workspaceId: string | null;
  createdAt: EpochMicros;
  createdBy: Creator;
  partialKeyHint: string | null;
  status: ApiKeyStatus;
}

/** Filters of a list; they combine with AND. */
export interface ApiKeyFilters {
  status?: ApiKeyStatus | undefined;
  workspaceId?: string | undefined;
  /** Keys created by this user (never a service account of the same ID). */
  createdByUserId?: string | undefined;
}

/** A keyset cursor: the ID of an API key and which side of it the page lies on. */
export interface PageCursor {
  direction: 'after' | 'before';
  id: string;
}

export interface ListApiKeysQuery {
  organizationId: string;
  limit: number;
  cursor?: PageCursor | undefined;
  filters?: ApiKeyFilters | undefined;
}

/** One page of keys, newest first; `hasMore` says whether more keys lie beyond it in the direction of travel. */
export interface ApiKeyPage {
  keys: ApiKeyRecord[];
  hasMore: boolean;
}

/** What a list query found: a page, or nothing because the cursor names no key of the organization. */
export type ListApiKeysResult = ({ kind: 'page' } & ApiKeyPage) | { kind: 'cursor_not_found' };

/** The fields an update changes: at least one of them. */
export type ApiKeyPatch =
  | { name: string; status?: ApiKeyStatus | undefined }
  | { name?: string | undefined; status: ApiKeyStatus };

export interface NewApiKey {
  organizationId: string;
  name: string;
  workspaceId?: string | null | undefined;
  createdBy: Creator;
  status?: ApiKeyStatus | undefined;
}

/** A created API key with its secret, which exists only in this value and is never stored. */
export interface CreatedApiKey {
  apiKey: ApiKeyRecord;
  secret: string;
}

/** A created admin key with its secret, which exists only in this value and is never stored. */
export interface CreatedAdminKey {
  adminKey: AdminKeyRecord;
  secret: string;
}

export interface SeedOptions {
  organizationId: string;
  count: number;
  /** Number of distinct workspace IDs; keys are spread over them plus the default workspace (null). */
  workspaces: number;
  /** Number of distinct creating users. */
  users: number;
  /** Seed of the pseudo-random spread of statuses, workspaces and users. */
  seed: number;
}

/** What a secret (by its hash) turned out to be. */
export type Credential =
  | { kind: 'admin_key'; adminKey: AdminKeyRecord }
  | { kind: 'api_key'; organizationId: string }
  | { kind: 'unknown' };

/** One connection pool of a store at one moment. */
export interface ConnectionPoolStats {
  /**
   * `pipeline`: the statements of requests, pipelined over few connections; `transactions`: transactions and the
   * other calls; `maintenance`: migrations and seeding.
   */
  pool: 'pipeline' | 'transactions' | 'maintenance';
  /** Connections open or opening. */
  size: number;
  /** Connections running at least one statement. */
  inUse: number;
  /**
   * Calls waiting for a connection. In the pipeline, where a connection takes several statements at once, the
   * statements queued behind another one on their connection.
   */
  waiting: number;
}

/**
 * The storage layer shared by the server, the CLI and the benchmarks. Every API key operation is scoped to one
 * organization: a key of another organization behaves exactly like a key that does not exist.
 */
export interface Store {
  /** Runs `work` in one transaction; everything it does through the given store commits or rolls back together. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;

  createOrganization(name: string): Promise<OrganizationRecord>;
  listOrganizations(): Promise<OrganizationRecord[]>;
  getOrganization(id: string): Promise<OrganizationRecord | undefined>;

  createAdminKey(input: { organizationId: string; name: string }): Promise<CreatedAdminKey>;
  setAdminKeyStatus(id: string, status: AdminKeyStatus): Promise<AdminKeyRecord | undefined>;
  /** Finds what a secret hash belongs to: an admin key, a regular API key, or nothing. */
  findCredential(secretHash: string): Promise<Credential>;

  createApiKey(input: NewApiKey): Promise<CreatedApiKey>;
  /**
   * Bulk-creates keys for load and pagination tests, with no secret anyone knows. Returns the number created.
   * It commits in chunks and cannot run inside `transaction()`.
   */
  seedApiKeys(options: SeedOptions): Promise<number>;
  getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(query: ListApiKeysQuery): Promise<ListApiKeysResult>;
  /**
   * Applies the patch, durably, and returns the updated key, or undefined when no such key exists in the
   * organization. The patch must change a field: an empty one is a programmer error (TypeError).
   */
  updateApiKey(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>;

  /** Runs a trivial query, within the store's deadline: resolves when the database answers. */
  ping(): Promise<void>;
  /** The number of active admin keys, in every organization: zero means nobody can call the API yet. */
  countActiveAdminKeys(): Promise<number>;

  /** How busy each connection pool is, read when asked; undefined for an engine without pools (SQLite). */
  poolStats(): ConnectionPoolStats[] | undefined;

  /** Closes the connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** Brings a database's schema up to date. */
export interface SchemaMigrator {
  /** Applies every pending migration and returns the names of those it applied, in order. */
  migrateToLatest(): Promise<string[]>;
}

/** An opened database: the store, and the migrator of its schema (which the store does not run by itself). */
export interface OpenedStore {
  store: Store;
  migrator: SchemaMigrator;
  /** What an operator should know about the database as opened (that it is read-only, say); usually none. */
  warnings?: string[];
}
