import type { ApiKey, ApiKeyStatus, CreatedBy } from '@apikeys/api-types';
import type { AdminKeyStatus } from './schema.js';

export type { AdminKeyStatus };

/** An organization: the tenant every admin key and API key belongs to. */
export interface Organization {
  id: string;
  name: string;
}

/** An admin key as stored: never the secret, only what identifies and describes it. */
export interface AdminKey {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: AdminKeyStatus;
}

/** Filters of the list operation; they combine with AND. */
export interface ApiKeyFilters {
  status?: ApiKeyStatus | undefined;
  workspaceId?: string | undefined;
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

/** One page, newest first. `hasMore` says whether more keys exist beyond it in the direction of travel. */
export interface ApiKeyPage {
  data: ApiKey[];
  hasMore: boolean;
}

/** The fields an update may change; an absent field is left unchanged. */
export interface ApiKeyPatch {
  name?: string | undefined;
  status?: ApiKeyStatus | undefined;
}

export interface NewApiKey {
  organizationId: string;
  name: string;
  workspaceId?: string | null | undefined;
  createdBy: CreatedBy;
  status?: ApiKeyStatus | undefined;
}

/** A created API key with its secret, which exists only in this value and is never stored. */
export interface CreatedApiKey {
  apiKey: ApiKey;
  secret: string;
}

export interface CreatedAdminKey {
  adminKey: AdminKey;
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

/** What the secret in an `x-api-key` header turned out to be. */
export type Credential =
  | { kind: 'admin_key'; adminKey: AdminKey }
  | { kind: 'api_key'; organizationId: string }
  | { kind: 'unknown' };

/**
 * The storage layer shared by the server and the CLI. Every API key operation is scoped to one
 * organization: a key of another organization behaves exactly like a key that does not exist.
 */
export interface Store {
  /** Runs `work` in one transaction; everything it does through the given store commits or rolls back together. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;

  createOrganization(name: string): Promise<Organization>;
  listOrganizations(): Promise<Organization[]>;
  getOrganization(id: string): Promise<Organization | undefined>;

  createAdminKey(input: { organizationId: string; name: string }): Promise<CreatedAdminKey>;
  setAdminKeyStatus(id: string, status: AdminKeyStatus): Promise<AdminKey | undefined>;
  /** Finds what a secret hash belongs to: an admin key, a regular API key, or nothing. */
  findCredential(secretHash: string): Promise<Credential>;

  createApiKey(input: NewApiKey): Promise<CreatedApiKey>;
  /**
   * Bulk-creates keys for load and pagination tests, with no secret anyone knows. Returns the number created.
   * It commits in chunks and cannot run inside `transaction()`.
   */
  seedApiKeys(options: SeedOptions): Promise<number>;
  getApiKey(organizationId: string, id: string): Promise<ApiKey | undefined>;
  /** Returns undefined when the cursor names no key of the organization. */
  listApiKeys(query: ListApiKeysQuery): Promise<ApiKeyPage | undefined>;
  /** Applies the patch and returns the updated key, or undefined when no such key exists in the organization. */
  updateApiKey(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined>;

  /** Closes the connections; the store is unusable afterwards. */
  close(): Promise<void>;
}
