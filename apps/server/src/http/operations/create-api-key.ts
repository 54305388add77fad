import { storedWorkspaceOfNewKey } from '../../domain/default-workspace.js';
import { toCreatedApiKeyJson } from '../serializers/created-api-key.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { creatorOf, serializeContext } from './caller-context.js';
import { expiresAtOf, principalOf } from './request-values.js';
import type { Services } from './services.js';

/** `createApiKey` (from version `v2026_10_21`): a new key, created by the caller's admin key, with its secret. */
export const createApiKey = {
  v2026_10_21:
    ({ apiKeys, clock }: Services): OperationHandler<V2026_10_21, 'createApiKey'> =>
    async ({ caller, changes, body }) => {
      const context = await serializeContext(caller, clock);
      const created = await apiKeys.createApiKey(
        caller.organizationId,
        {
          name: body.name,
          workspaceId: storedWorkspaceOfNewKey(body.workspace_id, context.defaultWorkspaceId),
          expiresAt: expiresAtOf(body.expires_at ?? null),
          principal: principalOf(body.principal),
          permissions: body.permissions ?? [],
          metadata: body.metadata ?? {},
          createdBy: creatorOf(caller),
          now: context.now,
        },
        changes,
      );
      return toCreatedApiKeyJson(created, context);
    },
};
