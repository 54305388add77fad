import type { v2026_10_21 } from '@apikeys/api-types';
import {
  type ApiKeyPage,
  type ApiKeyRecord,
  type CreatedApiKey,
  type EffectiveApiKeyStatus,
  effectiveStatus,
  type Principal,
} from '@apikeys/store';
import type { Verification } from '../../verification/verification-service.js';
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
    last_used_at: key.lastUsedAt == null ? null : microsToRfc3339(key.lastUsedAt),
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

/** The verification code of each status a found key can have. */
const VERIFICATION_CODES = {
  active: 'VALID',
  inactive: 'INACTIVE',
  archived: 'ARCHIVED',
  expired: 'EXPIRED',
} as const satisfies Record<EffectiveApiKeyStatus, Schemas['VerificationCode']>;

/** A verification as `KeyVerification`: valid only for an active key; the key, never its secret, when found. */
export function toKeyVerificationJson(
  verification: Verification,
  organizationId: string,
  context: SerializeContext,
): Schemas['KeyVerification'] {
  if (!verification.found) {
    return { valid: false, code: 'NOT_FOUND', key: null };
  }
  const { key, status } = verification;
  const shown = toApiKeyJson(key, context);
  return {
    valid: status === 'active',
    code: VERIFICATION_CODES[status],
    key: {
      id: shown.id,
      type: shown.type,
      organization_id: organizationId,
      name: shown.name,
      scope: shown.scope,
      principal: shown.principal,
      expires_at: shown.expires_at,
      status,
    },
  };
}
