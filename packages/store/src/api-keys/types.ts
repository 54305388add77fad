import type { ChangeContext, EpochMicros, PageCursor } from '../shared-types.js';

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
  /** The key's permission names, in the order given (absent in a record made by hand: none). */
  permissions?: readonly string[] | undefined;
  /** The organization's metadata of the key, as given (absent in a record made by hand: none). */
  metadata?: KeyMetadata | undefined;
}

/** A key's metadata: a JSON object the store keeps as given, and never interprets. */
export type KeyMetadata = { [name: string]: unknown };

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
  /**
   * Keys whose permissions grant this permission name: that hold it, or a wildcard over it. Each name that grants it
   * is read from the permissions index in page order (migration 0010).
   */
  permission?: string | undefined;
}

export interface ListApiKeysQuery {
  organizationId: string;
  limit: number;
  cursor?: PageCursor | undefined;
  filters?: ApiKeyFilters | undefined;
  /** The moment the status filter is evaluated at; the current time when not given. */
  now?: EpochMicros | undefined;
  /**
   * Whether each key's permissions and metadata are read (the default). Without them (for an API version that shows
   * neither), a page without a permission filter reads the covering list index alone, never a key's row.
   */
  attributes?: boolean | undefined;
}

/** One page of keys, newest first; `hasMore` says whether more keys lie beyond it in the direction of travel. */
export interface ApiKeyPage {
  keys: ApiKeyRecord[];
  hasMore: boolean;
}

/** What a list query found: a page, or nothing because the cursor names no key of the organization. */
export type ListApiKeysResult = ({ kind: 'page' } & ApiKeyPage) | { kind: 'cursor_not_found' };

/** The fields an update changes: at least one of them (`updateApiKey` refuses an empty patch). */
export interface ApiKeyPatch {
  name?: string | undefined;
  status?: ApiKeyStatus | undefined;
  /** A new expiry; null removes it. */
  expiresAt?: EpochMicros | null | undefined;
  /** The key's new permissions, replacing all of them. */
  permissions?: readonly string[] | undefined;
  /** The key's new metadata, replacing all of it. */
  metadata?: KeyMetadata | undefined;
}

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
  /** The key's permission names; none when undefined. */
  permissions?: readonly string[] | undefined;
  /** The key's metadata; none (`{}`) when undefined. */
  metadata?: KeyMetadata | undefined;
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

/** An API key found by its secret's hash, and the organization it belongs to: what a verification answers from. */
export interface KeyOfSecret {
  organizationId: string;
  apiKey: ApiKeyRecord;
}

/** The store's API keys: every call is scoped to one organization, but the lookup of a secret. */
export interface ApiKeyStore {
  /** The API key whose secret has this hash, in whichever organization, or undefined. */
  findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined>;
  /** Creates a key in the organization; `organization` scope without a principal is a TypeError. */
  createApiKey(input: NewApiKey, context?: ChangeContext): Promise<CreatedApiKey>;
  /**
   * Replaces a key with a new one (new ID and secret; same name, workspace, scope, principal, expiry, permissions
   * and metadata; status
   * active), and makes the old key expire after the grace period. Both changes commit in one transaction, or none.
   */
  rotateApiKey(input: RotateApiKeyInput, context?: ChangeContext): Promise<RotateApiKeyResult>;
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
}
