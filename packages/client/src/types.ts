import type { operations } from '@apikeys/api-types';

export type {
  ApiKey,
  ApiKeyList,
  ApiKeyStatus,
  CreatedBy,
  ErrorResponse,
  ErrorType,
  UpdateApiKeyRequest,
} from '@apikeys/api-types';

type ListApiKeys = operations['listApiKeys'];
type GetApiKey = operations['getApiKey'];
type UpdateApiKey = operations['updateApiKey'];

/** The query of `listApiKeys`: cursors (`before_id` or `after_id`), `limit` and filters. */
export type ListApiKeysQuery = NonNullable<ListApiKeys['parameters']['query']>;
/** The filters of `listApiKeys`, which every page of a walk sends again. */
export type ListApiKeysFilters = Omit<ListApiKeysQuery, 'before_id' | 'after_id'>;
/** The body of a `200` from `listApiKeys`: one page of keys. */
export type ListApiKeysResponse = ListApiKeys['responses'][200]['content']['application/json'];

/** The ID of an API key, as the `api_key_id` path parameter takes it. */
export type ApiKeyId = GetApiKey['parameters']['path']['api_key_id'];
/** The body of a `200` from `getApiKey`. */
export type GetApiKeyResponse = GetApiKey['responses'][200]['content']['application/json'];

/** The body `updateApiKey` takes: `name` omitted (unchanged) or set; `status` omitted or `null` (unchanged) or set. */
export type UpdateApiKeyBody = UpdateApiKey['requestBody']['content']['application/json'];
/** The body of a `200` from `updateApiKey`: the key as updated. */
export type UpdateApiKeyResponse = UpdateApiKey['responses'][200]['content']['application/json'];

/** The API versions the spec accepts in the `vendor-version` header. */
export type ApiVersion = GetApiKey['parameters']['header']['vendor-version'];
