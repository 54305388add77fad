import type { ApiKeyFilters, ApiKeyPage, ApiKeyRecord, ApiKeyStatus, PageCursor, Store } from '@apikeys/store';
import { AppError, invalidRequest } from './errors.js';
import { quotable } from './quotable.js';

/** What `listApiKeys` takes: a page size, at most one cursor, and filters. */
export interface ListApiKeysParams {
  limit: number;
  afterId?: string | undefined;
  beforeId?: string | undefined;
  filters: ApiKeyFilters;
}

/** What `updateApiKey` takes: each field is a new value, or undefined to leave it unchanged. */
export interface UpdateApiKeyParams {
  name?: string | undefined;
  status?: ApiKeyStatus | undefined;
}

/** The query parameter that carries each kind of cursor, which the errors about a cursor name. */
const CURSOR_PARAMETER: Record<PageCursor['direction'], string> = { after: 'after_id', before: 'before_id' };

/** `with ID apikey_...`, or `with this ID` when the value does not look like an ID and so is not repeated. */
function withId(id: string): string {
  return quotable(id, 'id') ? `with ID ${id}` : 'with this ID';
}

function apiKeyNotFound(id: string): AppError {
  return new AppError('not_found_error', `api_key_id: no API key ${withId(id)}`);
}

/** At most one cursor; both are a client error. */
function pageCursor({ afterId, beforeId }: ListApiKeysParams): PageCursor | undefined {
  if (afterId !== undefined && beforeId !== undefined) {
    throw invalidRequest(CURSOR_PARAMETER.before, 'cannot be combined with after_id; pass at most one cursor');
  }
  if (afterId !== undefined) {
    return { direction: 'after', id: afterId };
  }
  return beforeId === undefined ? undefined : { direction: 'before', id: beforeId };
}

/** The error for a cursor that names no key of the organization. */
function unknownCursor(cursor: PageCursor | undefined): Error {
  if (!cursor) {
    return new Error('the store reported an unknown cursor for a query without one');
  }
  return invalidRequest(CURSOR_PARAMETER[cursor.direction], `no API key ${withId(cursor.id)}`);
}

/**
 * The rules of the API key operations, independent of HTTP; each method is named after its operationId and acts
 * on one organization.
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
    });
    if (result.kind === 'cursor_not_found') {
      throw unknownCursor(cursor);
    }
    return { keys: result.keys, hasMore: result.hasMore };
  }

  async getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord> {
    const key = await this.store.getApiKey(organizationId, id);
    if (!key) {
      throw apiKeyNotFound(id);
    }
    return key;
  }

  /** Changes the given fields; an update that changes none returns the key as it is, without a write. */
  async updateApiKey(organizationId: string, id: string, { name, status }: UpdateApiKeyParams): Promise<ApiKeyRecord> {
    let key: ApiKeyRecord | undefined;
    if (name !== undefined) {
      key = await this.store.updateApiKey(organizationId, id, { name, status });
    } else if (status !== undefined) {
      key = await this.store.updateApiKey(organizationId, id, { status });
    } else {
      key = await this.store.getApiKey(organizationId, id);
    }
    if (!key) {
      throw apiKeyNotFound(id);
    }
    return key;
  }
}
