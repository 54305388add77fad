import type { SecretKind } from './secrets.js';

/** Integer microseconds since the Unix epoch: exact, portable between engines and cheap to compare. */
export type EpochMicros = number;

/**
 * The status an API key is stored with: `active` keys authenticate requests; `inactive` keys are switched off;
 * `archived` keys are kept for the record.
 */
export type ApiKeyStatus = 'active' | 'inactive' | 'archived';

/**
 * What a key is at a given moment: its stored status, except that a key whose expiry has passed is `expired`
 * unless it is archived (archived wins, then expired, then the stored status). Computed from the clock at read
 * time, never stored (`effectiveStatus` in statuses.ts).
 */
export type EffectiveApiKeyStatus = ApiKeyStatus | 'expired';

/** Whether an admin key may call the admin API. */
export type AdminKeyStatus = 'active' | 'disabled';

/** Whether a verifier key may verify API keys' secrets. */
export type VerifierKeyStatus = 'active' | 'disabled';

/** The kind of actor that created an API key. */
export type CreatorType = 'user' | 'service_account';

/** The actor that created an API key. */
export interface Creator {
  id: string;
  type: CreatorType;
}

/** The actor a key acts as (a key bound to a principal), when it is not simply the organization's. */
export interface Principal {
  type: 'user' | 'service_account';
  id: string;
}

/**
 * What a key belongs to: a workspace (a named one, or the organization's default workspace), or the whole
 * organization (no workspace; the key is bound to a principal).
 */
export type ApiKeyScope = 'workspace' | 'organization';

/** An organization: the tenant every admin key and API key belongs to. */
export interface OrganizationRecord {
  id: string;
  name: string;
  /**
   * The ID (`wrkspc_...`) of the organization's default workspace, the one a key gets when none is named. Records
   * of its keys say null, never this ID (`ApiKeyRecord.workspaceId`).
   */
  defaultWorkspaceId: string;
}

/** An admin key as stored: never the secret, only what identifies and describes it. */
export interface AdminKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: AdminKeyStatus;
}

/** A verifier key as stored: like an admin key, but it may only verify API keys' secrets. */
export interface VerifierKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: VerifierKeyStatus;
}

/** An API key as stored, without its secret (only its hash is stored, and never leaves the store). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The key's workspace; null for the organization's default workspace, and always null with `organization` scope. */
  workspaceId: string | null;
  /**
   * `workspace`: the key belongs to `workspaceId` (null: the default workspace). `organization`: the key belongs to
   * no workspace and always has a principal. The store always sets this and the two fields below; a record made by
   * hand (a test's) may leave them out, which means `workspace`, no expiry and no principal.
   */
  scope?: ApiKeyScope | undefined;
  createdAt: EpochMicros;
  createdBy: Creator;
  partialKeyHint: string | null;
  /** The stored status; what the key is now also depends on `expiresAt` (`effectiveStatus`). */
  status: ApiKeyStatus;
  /** When the key stops authenticating; null for never. */
  expiresAt?: EpochMicros | null | undefined;
  /** The actor the key is bound to, or null. */
  principal?: Principal | null | undefined;
  /** When the key was last verified as valid, to the minute; null for never (absent: not read). */
  lastUsedAt?: EpochMicros | null | undefined;
}

/** Filters of a list; they combine with AND. */
export interface ApiKeyFilters {
  /**
   * Keys whose effective status (at the query's `now`) is this one, or any of these (a non-empty list). Every
   * combination stays an index range scan in page order.
   */
  status?: EffectiveApiKeyStatus | readonly EffectiveApiKeyStatus[] | undefined;
  /**
   * A workspace ID: the keys stored with it (never one of the default workspace, which records as null, nor one with
   * organization scope). Null: the keys of the organization's default workspace (never one with organization scope).
   */
  workspaceId?: string | null | undefined;
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
  /** The moment the status filter is evaluated at; the current time when not given. */
  now?: EpochMicros | undefined;
}

/** One page of keys, newest first; `hasMore` says whether more keys lie beyond it in the direction of travel. */
export interface ApiKeyPage {
  keys: ApiKeyRecord[];
  hasMore: boolean;
}

/** What a list query found: a page, or nothing because the cursor names no key of the organization. */
export type ListApiKeysResult = ({ kind: 'page' } & ApiKeyPage) | { kind: 'cursor_not_found' };

/** The fields an update changes: at least one of them (`expiresAt: null` removes the expiry). */
export type ApiKeyPatch =
  | { name: string; status?: ApiKeyStatus | undefined; expiresAt?: EpochMicros | null | undefined }
  | { name?: string | undefined; status: ApiKeyStatus; expiresAt?: EpochMicros | null | undefined }
  | { name?: string | undefined; status?: ApiKeyStatus | undefined; expiresAt: EpochMicros | null };

export interface NewApiKey {
  organizationId: string;
  name: string;
  /**
   * `workspace` (the default): the key belongs to `workspaceId`, or to the organization's default workspace when
   * `workspaceId` is null or undefined (stored as null). `organization`: the key belongs to no workspace; it needs a
   * `principal` and takes no `workspaceId` (a TypeError otherwise). A `workspaceId` is stored as given, even the
   * organization's `defaultWorkspaceId`: mapping that one to null is the caller's job.
   */
  scope?: ApiKeyScope | undefined;
  workspaceId?: string | null | undefined;
  createdBy: Creator;
  status?: ApiKeyStatus | undefined;
  /** When the key expires; null or undefined for never. */
  expiresAt?: EpochMicros | null | undefined;
  principal?: Principal | null | undefined;
}

/** Who made a change: an admin key through the API, or an operator through the CLI (with the OS user, if known). */
export type AuditActor = { type: 'admin_key'; id: string } | { type: 'operator'; name: string | null };

/** The HTTP client of the request that made a change. */
export interface AuditClient {
  ipAddress: string | null;
  userAgent: string | null;
}

/**
 * Who makes the changes of a store call, and through which request: every change is recorded with it, in an audit
 * event written in the same transaction. Without one, a store records the change as an operator's
 * (`OPERATOR_CHANGES`): a call that does not come through the API comes from whoever runs the code.
 */
export interface ChangeContext {
  actor: AuditActor;
  /** The `request-id` of the API request; absent or null outside one. */
  requestId?: string | null | undefined;
  client?: AuditClient | null | undefined;
}

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

/** What `seedAuditEvents` makes: `count` events about seeded keys, one millisecond apart, the newest about now. */
export interface SeedAuditEventsOptions {
  organizationId: string;
  count: number;
  /** Number of distinct keys the events are about. */
  targets: number;
  /** Number of distinct admin keys that made the changes. */
  actors: number;
  /** Seed of the pseudo-random spread of types, targets and actors. */
  seed: number;
}

/** What `rotateApiKey` takes. */
export interface RotateApiKeyInput {
  organizationId: string;
  id: string;
  /** How long the old key keeps working: its `expiresAt` becomes `now + gracePeriodMicros`, unless sooner already. */
  gracePeriodMicros: EpochMicros;
  /** Who rotates: the creator of the new key. */
  createdBy: Creator;
}

/**
 * What a rotation did: the new key (with its secret, shown once), the old key as updated, and the moment of the
 * rotation (read once the old key was locked: it decided whether the key had expired, and the grace period runs from
 * it); or why nothing changed: no such key in the organization, or a key whose effective status is archived or
 * expired.
 */
export type RotateApiKeyResult =
  | { kind: 'rotated'; created: CreatedApiKey; previous: ApiKeyRecord; rotatedAt: EpochMicros }
  | { kind: 'not_found' }
  | { kind: 'not_rotatable'; key: ApiKeyRecord; status: 'archived' | 'expired' };

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

/** A created verifier key with its secret, which exists only in this value and is never stored. */
export interface CreatedVerifierKey {
  verifierKey: VerifierKeyRecord;
  secret: string;
}

/** A key's use to record: its ID and the moment (already cut to the minute). */
export interface KeyUse {
  id: string;
  lastUsedAt: EpochMicros;
}

/** An API key found by its secret's hash, and the organization it belongs to: what a verification answers from. */
export interface KeyOfSecret {
  organizationId: string;
  apiKey: ApiKeyRecord;
}

/**
 * What `seedApiKeys` makes: keys spread evenly over the statuses, workspaces and users; about 3% of them expired
 * already, 10% expiring a day to a year from now, the others never; 2% bound to a principal (the user who created
 * them), half of those with organization scope.
 */
export interface SeedOptions {
  organizationId: string;
  count: number;
  /** Number of distinct workspace IDs; keys are spread over them plus the default workspace (null). */
  workspaces: number;
  /** Number of distinct creating users. */
  users: number;
  /** Seed of the pseudo-random spread of statuses, workspaces, users, expiries and principals. */
  seed: number;
  /**
   * Also spread the attributes of API version v2026_10_21: about 3% of keys already expired, 10% expiring a day to a
   * year later, 2% bound to their creating user (half of those with organization scope). Off by default, so that
   * seeded keys are what they were before that version (keys any status update may change).
   */
  lifecycle?: boolean | undefined;
}

/** What a secret (by its hash) turned out to be. */
export type Credential =
  | { kind: 'admin_key'; adminKey: AdminKeyRecord }
  | { kind: 'verifier_key'; verifierKey: VerifierKeyRecord }
  | { kind: 'api_key'; organizationId: string }
  | { kind: 'unknown' };

/** A key whose answer to a verification or an authentication may have changed. */
export interface KeyChange {
  kind: 'api_key' | 'admin_key' | 'verifier_key';
  id: string;
}

/**
 * What a watcher of key changes hears: one change, or `reset` when changes may have been missed (the connection
 * that brings them was lost, or another process changed a SQLite file): whatever was read before may be stale.
 */
export type KeyChangeEvent = { type: 'changed'; change: KeyChange } | { type: 'reset' };

export type KeyChangeListener = (event: KeyChangeEvent) => void;

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

  /**
   * Each call that changes something records the change in an audit event, in the same transaction, as made in
   * `context` (an operator's change when absent). A call that changes nothing records nothing.
   */
  createOrganization(name: string, context?: ChangeContext): Promise<OrganizationRecord>;
  listOrganizations(): Promise<OrganizationRecord[]>;
  getOrganization(id: string): Promise<OrganizationRecord | undefined>;

  createAdminKey(input: { organizationId: string; name: string }, context?: ChangeContext): Promise<CreatedAdminKey>;
  setAdminKeyStatus(id: string, status: AdminKeyStatus, context?: ChangeContext): Promise<AdminKeyRecord | undefined>;
  /**
   * Finds what a secret hash belongs to: an admin key, a verifier key, a regular API key, or nothing. With `kind`
   * (from the secret's prefix), only keys of that kind are looked at.
   */
  findCredential(secretHash: string, kind?: SecretKind): Promise<Credential>;

  /** Creates a verifier key of the organization (not audited: the trail records API keys and admin keys). */
  createVerifierKey(input: { organizationId: string; name: string }): Promise<CreatedVerifierKey>;
  setVerifierKeyStatus(id: string, status: VerifierKeyStatus): Promise<VerifierKeyRecord | undefined>;
  /** The API key whose secret has this hash, in whichever organization, or undefined. */
  findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined>;
  /**
   * Records when keys were used, in one statement: each key's `lastUsedAt` becomes the later of the stored value
   * and the given one (so that replicas flushing in any order never move it back).
   */
  recordKeyUsage(uses: readonly KeyUse[]): Promise<void>;

  /** Creates a key in the organization; `organization` scope without a principal is a TypeError. */
  createApiKey(input: NewApiKey, context?: ChangeContext): Promise<CreatedApiKey>;
  /**
   * Replaces a key with a new one (new ID and secret; same name, workspace, scope, principal and expiry; status
   * active), and makes the old key expire after the grace period. Both changes commit in one transaction, or none.
   */
  rotateApiKey(input: RotateApiKeyInput, context?: ChangeContext): Promise<RotateApiKeyResult>;
  /**
   * Bulk-creates keys for load and pagination tests, with no secret anyone knows. Returns the number created.
   * It commits in chunks and cannot run inside `transaction()`, and records one `api_key.seeded` event for all the
   * keys, once they are all in.
   */
  seedApiKeys(options: SeedOptions, context?: ChangeContext): Promise<number>;
  getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(query: ListApiKeysQuery): Promise<ListApiKeysResult>;
  /**
   * Applies the patch, durably, and returns the updated key, or undefined when no such key exists in the
   * organization. The patch must name a field: an empty one is a programmer error (TypeError). A patch that sets
   * every field to the value it has records no event. An expired key can only be renamed or archived: a patch that
   * sets its status to `active` or `inactive`, or its expiry, changes nothing and throws ExpiredApiKeyError. Whether
   * the key has expired is decided against the clock read under the key's lock, in the statement that changes it.
   */
  updateApiKey(
    organizationId: string,
    id: string,
    patch: ApiKeyPatch,
    context?: ChangeContext,
  ): Promise<ApiKeyRecord | undefined>;

  /** One page of the organization's audit trail, newest first. */
  listAuditEvents(query: ListAuditEventsQuery): Promise<ListAuditEventsResult>;
  getAuditEvent(organizationId: string, id: string): Promise<AuditEventRecord | undefined>;
  /**
   * Bulk-creates audit events for load tests, about keys that need not exist. Like `seedApiKeys`, it commits in
   * chunks and cannot run inside `transaction()`. Returns the number created.
   */
  seedAuditEvents(options: SeedAuditEventsOptions): Promise<number>;

  /**
   * Calls `listener` for each change to an API key, admin key or verifier key made by any process on this database,
   * once it has committed: at once for this store's own, and as soon as the engine tells of the others' (PostgreSQL:
   * notifications; SQLite: a poll of the file's version, which says only that something changed: `reset`). Resolves
   * once listening, with the function that stops it.
   */
  watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>>;

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
