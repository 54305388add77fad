import type { v2026_10_21 } from '@apikeys/api-types';
import {
  type ApiKeyPage,
  type ApiKeyRecord,
  type CreatedApiKey,
  effectiveStatus,
  type Principal,
} from '@apikeys/store';
import type { SerializeContext } from './context.js';
import { pageJson } from './page.js';
import { microsToRfc3339 } from './timestamps.js';

type Schemas = v2026_10_21.components['schemas'];

function principalJson(principal: Principal | null | undefined): Schemas['ApiKeyPrincipal'] | null {
  if (!principal) {
    return null;
  }
  return principal.type === 'user'
    ? { type: 'user_actor', user_id: principal.id }
    : { type: 'service_account_actor', service_account_id: principal.id };
}

/** An API key record as version `v2026_10_21` shows it: the status as of `now`, the scope with a real workspace ID. */
export function toApiKeyJson(key: ApiKeyRecord, context: SerializeContext): Schemas['ApiKey'] {
  return {
    id: key.id,
    type: 'api_key',
    name: key.name,
    created_at: microsToRfc3339(key.createdAt),
    created_by: key.createdBy,
    expires_at: key.expiresAt == null ? null : microsToRfc3339(key.expiresAt),
    partial_key_hint: key.partialKeyHint,
    principal: principalJson(key.principal),
    scope:
      key.scope === 'organization'
        ? { type: 'organization' }
        : { type: 'workspace', workspace_id: key.workspaceId ?? context.defaultWorkspaceId },
    status: effectiveStatus(key, context.now),
  };
}

/** A page of keys as this version's `ApiKeyList`. */
export function toApiKeyListJson(page: ApiKeyPage, context: SerializeContext): Schemas['ApiKeyList'] {
  return pageJson(
    page.keys.map((key) => toApiKeyJson(key, context)),
    page.hasMore,
  );
}

/** A new key with its secret: the one response that ever holds it. */
export function toCreatedApiKeyJson(created: CreatedApiKey, context: SerializeContext): Schemas['CreatedApiKey'] {
  return { ...toApiKeyJson(created.apiKey, context), key: created.secret };
}
