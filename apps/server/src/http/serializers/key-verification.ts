import type { v2026_10_21 } from '@apikeys/api-types';
import type { EffectiveApiKeyStatus } from '@apikeys/store';
import type { Verification } from '../../verification/verification-service.js';
import { toApiKeyJson } from './api-key-v2026_10_21.js';
import type { SerializeContext } from './context.js';

type Schemas = v2026_10_21.components['schemas'];

/** The verification code of each status a found key can have. */
const VERIFICATION_CODES = {
  active: 'VALID',
  inactive: 'INACTIVE',
  archived: 'ARCHIVED',
  expired: 'EXPIRED',
} as const satisfies Record<EffectiveApiKeyStatus, Schemas['VerificationCode']>;

/**
 * A verification as `KeyVerification`: valid only for an active key that satisfies the request's permission
 * requirement; the key, never its secret, when found.
 */
export function toKeyVerificationJson(
  verification: Verification,
  organizationId: string,
  context: SerializeContext,
): Schemas['KeyVerification'] {
  if (!verification.found) {
    return { valid: false, code: 'NOT_FOUND', key: null };
  }
  const { key, status, permitted } = verification;
  const shown = toApiKeyJson(key, context);
  const valid = status === 'active' && permitted;
  return {
    valid,
    code: status === 'active' && !permitted ? 'INSUFFICIENT_PERMISSIONS' : VERIFICATION_CODES[status],
    key: {
      id: shown.id,
      type: shown.type,
      organization_id: organizationId,
      name: shown.name,
      scope: shown.scope,
      principal: shown.principal,
      expires_at: shown.expires_at,
      status,
      permissions: shown.permissions,
      metadata: shown.metadata,
    },
  };
}
