import { storedWorkspaceFilter } from '../../domain/default-workspace.js';
import { toApiKeyListJson as toApiKeyListJsonV2023_06_01 } from '../serializers/api-key-list.js';
import { toApiKeyListJson as toApiKeyListJsonV2026_10_21 } from '../serializers/api-key-list-v2026_10_21.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2023_06_01, V2026_10_21 } from './api-versions.js';
import { serializeContext } from './caller-context.js';
import type { Services } from './services.js';

/** `listApiKeys`: one page of the organization's keys, filtered, as of the moment of the request. */
export const listApiKeys = {
  /** The first version shows an expired key as `inactive`, so its `inactive` filter returns the expired keys too. */
  v2023_06_01:
    ({ apiKeys, clock }: Services): OperationHandler<V2023_06_01, 'listApiKeys'> =>
    async ({ caller, query }) => {
      const now = clock();
      const page = await apiKeys.listApiKeys(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          status: query.status === 'inactive' ? ['inactive', 'expired'] : query.status,
          workspaceId: await storedWorkspaceFilter(query.workspace_id, caller.defaultWorkspaceId),
          createdByUserId: query.created_by_user_id,
        },
        now,
        // This version shows no permissions and no metadata: the page is read from the list index alone.
        attributes: false,
      });
      return toApiKeyListJsonV2023_06_01(page, now);
    },

  v2026_10_21:
    ({ apiKeys, clock }: Services): OperationHandler<V2026_10_21, 'listApiKeys'> =>
    async ({ caller, query }) => {
      const context = await serializeContext(caller, clock);
      const page = await apiKeys.listApiKeys(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          status: query.status,
          workspaceId: await storedWorkspaceFilter(query.workspace_id, caller.defaultWorkspaceId),
          createdByUserId: query.created_by_user_id,
          permission: query.permission,
        },
        now: context.now,
        attributes: true,
      });
      return toApiKeyListJsonV2026_10_21(page, context);
    },
};
