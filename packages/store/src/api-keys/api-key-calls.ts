import type { CoreCalls } from '../core/core-calls.js';
import type { ApiKeyStore } from '../types.js';
import { createApiKey, rotateApiKey } from './create-api-key.js';
import { findApiKeyBySecretHash, getApiKey } from './find-api-keys.js';
import { listApiKeys } from './list-api-keys.js';
import { updateApiKey } from './update-api-key.js';

/** The calls of `ApiKeyStore`, each in the module that holds its SQL. */
export const API_KEY_CALLS = {
  findApiKeyBySecretHash,
  createApiKey,
  rotateApiKey,
  getApiKey,
  listApiKeys,
  updateApiKey,
} satisfies CoreCalls<ApiKeyStore>;
