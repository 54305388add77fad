import type { API_VERSION_NAMES, v2026_10_21 } from '@apikeys/api-types';
import type { Principal } from '@apikeys/store';
import type { ApiKeysService } from '../../domain/api-keys-service.js';
import { invalidRequest } from '../../domain/errors.js';
import type { Readiness } from '../../health/readiness.js';
import { toApiKeyJson, toApiKeyListJson, toCreatedApiKeyJson } from '../serializers/api-key-v2026_10_21.js';
import { rfc3339ToMicros } from '../serializers/timestamps.js';
import type { OperationHandlers } from '../typed-handler.js';
import { creatorOf, serializeContext, workspaceFilter } from './caller-context.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';

type Latest = typeof API_VERSION_NAMES.v2026_10_21;
type Schemas = v2026_10_21.components['schemas'];

/** An `expires_at` of a request as microseconds; null stays null (never), undefined stays undefined (unchanged). */
function expiresAtOf<T extends string | null | undefined>(text: T): number | Exclude<T, string> {
  if (typeof text !== 'string') {
    return text as Exclude<T, string>;
  }
  const micros = rfc3339ToMicros(text);
  if (micros === undefined) {
    throw invalidRequest('expires_at', 'must be an RFC 3339 datetime with a time zone, such as 2027-01-31T00:00:00Z');
  }
  return micros;
}

function principalOf(principal: Schemas['ApiKeyPrincipal'] | null | undefined): Principal | null {
  if (!principal) {
    return null;
  }
  return principal.type === 'user_actor'
    ? { type: 'user', id: principal.user_id }
    : { type: 'service_account', id: principal.service_account_id };
}

/** The handlers of API version `v2026_10_21`: the key lifecycle, with expiry, principals and scopes. */
export function v2026_10_21Handlers(service: ApiKeysService, readiness: Readiness): OperationHandlers<Latest> {
  return {
    getHealth: getHealth(),
    getReadiness: getReadiness(readiness),
    listApiKeys: async ({ caller, query }) => {
      const context = await serializeContext(caller);
      const page = await service.listApiKeys(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          status: query.status,
          workspaceId: await workspaceFilter(caller, query.workspace_id),
          createdByUserId: query.created_by_user_id,
        },
        now: context.now,
      });
      return toApiKeyListJson(page, context);
    },
    getApiKey: async ({ caller, path }) => {
      const context = await serializeContext(caller);
      return toApiKeyJson(await service.getApiKey(caller.organizationId, path.api_key_id), context);
    },
    // `null` leaves a field unchanged, except `expires_at`, where it removes the expiry.
    updateApiKey: async ({ caller, path, body }) => {
      const context = await serializeContext(caller);
      const key = await service.updateApiKey(caller.organizationId, path.api_key_id, {
        name: body.name ?? undefined,
        status: body.status ?? undefined,
        expiresAt: expiresAtOf(body.expires_at),
        now: context.now,
      });
      return toApiKeyJson(key, context);
    },
    createApiKey: async ({ caller, body }) => {
      const context = await serializeContext(caller);
      const created = await service.createApiKey(caller.organizationId, {
        name: body.name,
        workspaceId: body.workspace_id === context.defaultWorkspaceId ? undefined : body.workspace_id,
        expiresAt: expiresAtOf(body.expires_at ?? null),
        principal: principalOf(body.principal),
        createdBy: creatorOf(caller),
        now: context.now,
      });
      return toCreatedApiKeyJson(created, context);
    },
    rotateApiKey: async ({ caller, path, body }) => {
      const context = await serializeContext(caller);
      const { created, previous } = await service.rotateApiKey(caller.organizationId, path.api_key_id, {
        gracePeriodSeconds: body?.grace_period_seconds ?? 0,
        createdBy: creatorOf(caller),
        now: context.now,
      });
      return { ...toCreatedApiKeyJson(created, context), rotated_api_key: toApiKeyJson(previous, context) };
    },
  };
}
