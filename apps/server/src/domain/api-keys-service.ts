import type { ApiKey, ApiKeyList, ApiKeyStatus } from '@apikeys/api-types';
import type { ApiKeyFilters, ApiKeyPatch, PageCursor, Store } from '@apikeys/store';
import { AppError, invalidRequest } from './errors.js';

export interface ListParams {
  limit: number;
  beforeId?: string | undefined;
  afterId?: string | undefined;
  filters: ApiKeyFilters;
}

export interface UpdateParams {
  name?: string | undefined;
  status?: ApiKeyStatus | null | undefined;
}

function notFound(id: string): AppError {
  return new AppError('not_found_error', `api_key_id: no API key with ID ${id}`);
}

/** The rules of the API key operations, independent of HTTP. Every call acts on one organization. */
export class ApiKeysService {
  constructor(private readonly store: Store) {}

  async list(organizationId: string, params: ListParams): Promise<ApiKeyList> {
    if (params.beforeId !== undefined && params.afterId !== undefined) {
      throw invalidRequest('before_id', 'cannot be combined with after_id; pass at most one cursor');
    }
    let cursor: PageCursor | undefined;
    let cursorParameter = '';
    if (params.afterId !== undefined) {
      cursor = { direction: 'after', id: params.afterId };
      cursorParameter = 'after_id';
    } else if (params.beforeId !== undefined) {
      cursor = { direction: 'before', id: params.beforeId };
      cursorParameter = 'before_id';
    }

    const page = await this.store.listApiKeys({ organizationId, limit: params.limit, cursor, filters: params.filters });
    if (!page) {
      throw invalidRequest(cursorParameter, `no API key with ID ${cursor?.id}`);
    }
    return {
      data: page.data,
      has_more: page.hasMore,
      first_id: page.data[0]?.id ?? null,
      last_id: page.data.at(-1)?.id ?? null,
    };
  }

  async get(organizationId: string, id: string): Promise<ApiKey> {
    const key = await this.store.getApiKey(organizationId, id);
    if (!key) {
      throw notFound(id);
    }
    return key;
  }

  /** Omitted and null fields are left unchanged; an empty update returns the key as it is. */
  async update(organizationId: string, id: string, params: UpdateParams): Promise<ApiKey> {
    const patch: ApiKeyPatch = {
      name: params.name,
      status: params.status ?? undefined,
    };
    const key = await this.store.updateApiKey(organizationId, id, patch);
    if (!key) {
      throw notFound(id);
    }
    return key;
  }
}
