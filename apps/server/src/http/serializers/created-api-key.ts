import type { v2026_10_21 } from '@apikeys/api-types';
import type { CreatedApiKey } from '@apikeys/store';
import { toApiKeyJson } from './api-key-v2026_10_21.js';
import type { SerializeContext } from './context.js';

type Schemas = v2026_10_21.components['schemas'];

/** A new key with its secret as `CreatedApiKey`: the one response that ever holds the secret. */
export function toCreatedApiKeyJson(created: CreatedApiKey, context: SerializeContext): Schemas['CreatedApiKey'] {
  return { ...toApiKeyJson(created.apiKey, context), key: created.secret };
}
