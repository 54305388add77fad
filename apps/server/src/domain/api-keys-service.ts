import { metadataProblem } from '@apikeys/permissions';
import {
  type ApiKeyFilters,
  type ApiKeyPage,
  type ApiKeyPatch,
  type ApiKeyRecord,
  type ApiKeyStatus,
  type ChangeContext,
  type CreatedApiKey,
  type Creator,
  type EpochMicros,
  ExpiredApiKeyError,
  type KeyMetadata,
  type Principal,
  type RotateApiKeyResult,
  type Store,
} from '@apikeys/store';
import { AppError, invalidRequest } from './errors.js';
import { type CursorParams, notFound, pageCursor, unknownCursor } from './page-cursor.js';

/** What `listApiKeys` takes: a page size, at most one cursor, filters, and the moment the status filter applies at. */
export interface ListApiKeysParams extends CursorParams {
  limit: number;
  filters: ApiKeyFilters;
  /** The moment the status filter applies at: the moment of the request. */
  now: EpochMicros;
  /** Whether the keys' permissions and metadata are read: not for a version that shows neither. */
  attributes: boolean;
}

/**
 * What `updateApiKey` takes: each field is a new value, or undefined to leave it unchanged; `expiresAt: null`
 * removes the expiry.
 */
export interface UpdateApiKeyParams {
  name?: string | undefined;
  status?: ApiKeyStatus | undefined;
  expiresAt?: EpochMicros | null | undefined;
  /** New permissions, replacing all of them. */
  permissions?: readonly string[] | undefined;
  /** New metadata, replacing all of it. */
  metadata?: KeyMetadata | undefined;
  /** The moment that decides whether a new expiry lies in the future: the moment of the request. */
  now: EpochMicros;
}

/** What `createApiKey` takes. `workspaceId`: undefined for the default workspace, null for organization scope. */
export interface CreateApiKeyParams {
  name: string;
  workspaceId: string | null | undefined;
  expiresAt: EpochMicros | null;
  principal: Principal | null;
  permissions: readonly string[];
  metadata: KeyMetadata;
  createdBy: Creator;
  now: EpochMicros;
}

/** What `rotateApiKey` takes. The store reads the moment of the rotation once it holds the key's lock. */
export interface RotateApiKeyParams {
  gracePeriodSeconds: number;
  createdBy: Creator;
}

const apiKeyNotFound = (id: string) => notFound('api_key_id', 'API key', id);

/** The key a store call found, or the API's not-found error for the ID it was asked for. */
function foundKey(key: ApiKeyRecord | undefined, id: string): ApiKeyRecord {
  if (!key) {
    throw apiKeyNotFound(id);
  }
  return key;
}

/**
 * Refuses metadata beyond the bounds the spec states and its validator cannot check (serialized size, depth, numbers
 * that would not come back as sent).
 */
function requireBoundedMetadata(metadata: unknown): void {
  if (metadata === undefined) {
    return;
  }
  const problem = metadataProblem(metadata);
  if (problem !== undefined) {
    // The problem names the field first: `metadata: ...`, or the member it is about (`metadata.limits.rps: ...`).
    throw new AppError('invalid_request_error', problem);
  }
}

/** Refuses an expiry that is not in the future. */
function requireFuture(expiresAt: EpochMicros | null | undefined, now: EpochMicros): void {
  if (expiresAt !== null && expiresAt !== undefined && expiresAt <= now) {
    throw invalidRequest('expires_at', 'must lie in the future');
  }
}

/**
 * The rules of the API key operations, independent of HTTP and of API versions; each method is named after its
 * operationId and acts on one organization.
 */
export class ApiKeysService {
  constructor(private readonly store: Store) {}

  /** One page of keys. A cursor must name a key of the organization (which need not match the filters). */
  async listApiKeys(organizationId: string, params: ListApiKeysParams): Promise<ApiKeyPage> {
    const cursor = pageCursor(params);
    const result = await this.store.listApiKeys({
      organizationId,
      limit: params.limit,
      cursor,
      filters: params.filters,
      now: params.now,
      attributes: params.attributes,
    });
    if (result.kind === 'cursor_not_found') {
      throw unknownCursor(cursor, 'API key');
    }
    return { keys: result.keys, hasMore: result.hasMore };
  }

  async getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord> {
    return foundKey(await this.store.getApiKey(organizationId, id), id);
  }

  /**
   * Changes the given fields; an update that changes none returns the key as it is, without a write. An expired key
   * can be renamed and archived, nothing else: its status cannot become active or inactive, nor its expiry change.
   */
  async updateApiKey(
    organizationId: string,
    id: string,
    params: UpdateApiKeyParams,
    context: ChangeContext,
  ): Promise<ApiKeyRecord> {
    const { now, ...patch } = params;
    const { expiresAt } = patch;
    requireFuture(expiresAt, now);
    requireBoundedMetadata(patch.metadata);
    if (Object.values(patch).every((value) => value === undefined)) {
      return this.getApiKey(organizationId, id);
    }
    let key: ApiKeyRecord | undefined;
    try {
      // The store decides whether the key has expired under the key's lock, in the statement that changes it.
      key = await this.store.updateApiKey(organizationId, id, patch satisfies ApiKeyPatch, context);
    } catch (error) {
      if (error instanceof ExpiredApiKeyError) {
        const field = expiresAt === undefined ? 'status' : 'expires_at';
        throw invalidRequest(field, 'the key has expired; an expired key can only be renamed or archived');
      }
      throw error;
    }
    return foundKey(key, id);
  }

  /** Creates a key in the organization; organization scope needs a principal. */
  async createApiKey(
    organizationId: string,
    params: CreateApiKeyParams,
    context: ChangeContext,
  ): Promise<CreatedApiKey> {
    requireFuture(params.expiresAt, params.now);
    requireBoundedMetadata(params.metadata);
    const organizationScope = params.workspaceId === null;
    if (organizationScope && params.principal === null) {
      throw invalidRequest('workspace_id', 'null (organization scope) needs a principal; name a workspace, or omit it');
    }
    return this.store.createApiKey(
      {
        organizationId,
        name: params.name,
        scope: organizationScope ? 'organization' : 'workspace',
        workspaceId: params.workspaceId ?? undefined,
        createdBy: params.createdBy,
        expiresAt: params.expiresAt,
        principal: params.principal,
        permissions: params.permissions,
        metadata: params.metadata,
      },
      context,
    );
  }

  /** Replaces a key with a new one; the old one expires after the grace period. Archived and expired keys cannot. */
  async rotateApiKey(
    organizationId: string,
    id: string,
    params: RotateApiKeyParams,
    context: ChangeContext,
  ): Promise<Extract<RotateApiKeyResult, { kind: 'rotated' }>> {
    const result = await this.store.rotateApiKey(
      {
        organizationId,
        id,
        gracePeriodMicros: params.gracePeriodSeconds * 1_000_000,
        createdBy: params.createdBy,
      },
      context,
    );
    if (result.kind === 'not_found') {
      throw apiKeyNotFound(id);
    }
    if (result.kind === 'not_rotatable') {
      throw invalidRequest('api_key_id', `the key is ${result.status}; only an active or inactive key can be rotated`);
    }
    return result;
  }
}
