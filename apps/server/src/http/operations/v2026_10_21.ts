import { type API_VERSION_NAMES, LATEST_EXPIRY, type v2026_10_21 } from '@apikeys/api-types';
import type { Principal } from '@apikeys/store';
import { invalidRequest } from '../../domain/errors.js';
import type { Readiness } from '../../health/readiness.js';
import {
  toApiKeyJson,
  toApiKeyListJson,
  toCreatedApiKeyJson,
  toKeyVerificationJson,
} from '../serializers/api-key-v2026_10_21.js';
import { toAuditEventJson, toAuditEventListJson } from '../serializers/audit-event.js';
import { rfc3339ToMicros } from '../serializers/timestamps.js';
import type { OperationHandlers } from '../typed-handler.js';
import { creatorOf, serializeContext, workspaceFilter } from './caller-context.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';
import type { Services } from './services.js';

type Latest = typeof API_VERSION_NAMES.v2026_10_21;
type Schemas = v2026_10_21.components['schemas'];

/**
 * A datetime of a request (`field`) as microseconds; null stays null (for `expires_at`: never), undefined stays
 * undefined (unchanged, or no filter).
 */
function microsOf<T extends string | null | undefined>(field: string, text: T): number | Exclude<T, string> {
  if (typeof text !== 'string') {
    return text as Exclude<T, string>;
  }
  const micros = rfc3339ToMicros(text);
  if (micros === undefined) {
    throw invalidRequest(field, 'must be an RFC 3339 datetime with a time zone, such as 2027-01-31T00:00:00Z');
  }
  return micros;
}

/** The latest expiry a request may set (`ExpiresAt.x-latest`), in microseconds. */
const LATEST_EXPIRY_MICROS = rfc3339ToMicros(LATEST_EXPIRY) as number;

/**
 * An `expires_at` of a request as microseconds (null: never; undefined: unchanged). Past the spec's latest expiry,
 * microseconds no longer fit a number exactly: such a value is refused before anything is written.
 */
function expiresAtOf<T extends string | null | undefined>(text: T): number | Exclude<T, string> {
  const micros = microsOf('expires_at', text);
  if (typeof micros === 'number' && micros > LATEST_EXPIRY_MICROS) {
    throw invalidRequest('expires_at', `must be no later than ${LATEST_EXPIRY}`);
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
export function v2026_10_21Handlers(services: Services, readiness: Readiness): OperationHandlers<Latest> {
  const { apiKeys: service, auditEvents, verification } = services;
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
    updateApiKey: async ({ caller, changes, path, body }) => {
      const context = await serializeContext(caller);
      const key = await service.updateApiKey(
        caller.organizationId,
        path.api_key_id,
        {
          name: body.name ?? undefined,
          status: body.status ?? undefined,
          expiresAt: expiresAtOf(body.expires_at),
          now: context.now,
        },
        changes,
      );
      return toApiKeyJson(key, context);
    },
    createApiKey: async ({ caller, changes, body }) => {
      const context = await serializeContext(caller);
      const created = await service.createApiKey(
        caller.organizationId,
        {
          name: body.name,
          workspaceId: body.workspace_id === context.defaultWorkspaceId ? undefined : body.workspace_id,
          expiresAt: expiresAtOf(body.expires_at ?? null),
          principal: principalOf(body.principal),
          createdBy: creatorOf(caller),
          now: context.now,
        },
        changes,
      );
      return toCreatedApiKeyJson(created, context);
    },
    rotateApiKey: async ({ caller, changes, path, body }) => {
      const { created, previous, rotatedAt } = await service.rotateApiKey(
        caller.organizationId,
        path.api_key_id,
        { gracePeriodSeconds: body?.grace_period_seconds ?? 0, createdBy: creatorOf(caller) },
        changes,
      );
      // Both keys as they are at the moment of the rotation, which the store read under the old key's lock.
      const context = { ...(await serializeContext(caller)), now: rotatedAt };
      return { ...toCreatedApiKeyJson(created, context), rotated_api_key: toApiKeyJson(previous, context) };
    },
    listAuditEvents: async ({ caller, query }) => {
      const page = await auditEvents.listAuditEvents(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          targetId: query.target_id,
          actorId: query.actor_id,
          types: query.type,
          occurredAfter: microsOf('occurred_after', query.occurred_after),
          occurredBefore: microsOf('occurred_before', query.occurred_before),
        },
      });
      return toAuditEventListJson(page);
    },
    getAuditEvent: async ({ caller, path }) =>
      toAuditEventJson(await auditEvents.getAuditEvent(caller.organizationId, path.audit_event_id)),
    verifyApiKey: async ({ caller, body }) => {
      const context = await serializeContext(caller);
      const verdict = await verification.verifyApiKey(caller.organizationId, body.key, context.now);
      return toKeyVerificationJson(verdict, caller.organizationId, context);
    },
  };
}
