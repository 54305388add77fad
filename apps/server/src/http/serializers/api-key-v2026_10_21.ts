import type { v2026_10_21 } from '@apikeys/api-types';
import { type ApiKeyRecord, effectiveStatus, microsToRfc3339, type Principal } from '@apikeys/store';
import { shownWorkspaceId } from '../../domain/default-workspace.js';
import type { SerializeContext } from './context.js';

type Schemas = v2026_10_21.components['schemas'];

/** A key's principal as `ApiKeyPrincipal`. */
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
    last_used_at: key.lastUsedAt == null ? null : microsToRfc3339(key.lastUsedAt),
    partial_key_hint: key.partialKeyHint,
    principal: principalJson(key.principal),
    scope:
      key.scope === 'organization'
        ? { type: 'organization' }
        : { type: 'workspace', workspace_id: shownWorkspaceId(key.workspaceId, context.defaultWorkspaceId) },
    status: effectiveStatus(key, context.now),
    permissions: [...(key.permissions ?? [])],
    metadata: key.metadata ?? {},
  };
}
