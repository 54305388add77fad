import type { API_VERSION_NAMES } from '@apikeys/api-types';
import { nowMicros } from '@apikeys/store';
import type { Readiness } from '../../health/readiness.js';
import { toApiKeyJson, toApiKeyListJson } from '../serializers/api-key.js';
import type { OperationHandlers } from '../typed-handler.js';
import { workspaceFilter } from './caller-context.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';
import type { Services } from './services.js';

type First = typeof API_VERSION_NAMES.v2023_06_01;

/**
 * The handlers of the first API version. It shows an expired key as `inactive`, so its `inactive` filter returns
 * the expired keys too.
 */
export function v2023_06_01Handlers({ apiKeys: service }: Services, readiness: Readiness): OperationHandlers<First> {
  return {
    getHealth: getHealth(),
    getReadiness: getReadiness(readiness),
    listApiKeys: async ({ caller, query }) => {
      const now = nowMicros();
      const page = await service.listApiKeys(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          status: query.status === 'inactive' ? ['inactive', 'expired'] : query.status,
          workspaceId: await workspaceFilter(caller, query.workspace_id),
          createdByUserId: query.created_by_user_id,
        },
        now,
      });
      return toApiKeyListJson(page, now);
    },
    getApiKey: async ({ caller, path }) =>
      toApiKeyJson(await service.getApiKey(caller.organizationId, path.api_key_id)),
    // A `null` status, like an omitted one, leaves it unchanged.
    updateApiKey: async ({ caller, changes, path, body }) => {
      const now = nowMicros();
      const key = await service.updateApiKey(
        caller.organizationId,
        path.api_key_id,
        { name: body.name, status: body.status ?? undefined, now },
        changes,
      );
      return toApiKeyJson(key, now);
    },
  };
}
