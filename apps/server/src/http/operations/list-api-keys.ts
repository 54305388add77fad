import type { ApiKeysService } from '../../domain/api-keys-service.js';
import { toApiKeyListJson } from '../serializers/api-key.js';
import type { OperationHandler } from '../typed-handler.js';

/** `GET /v1/organizations/api_keys` */
export function listApiKeys(service: ApiKeysService): OperationHandler<'listApiKeys'> {
  return async ({ caller, query }) =>
    toApiKeyListJson(
      await service.listApiKeys(caller.organizationId, {
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        filters: {
          status: query.status,
          workspaceId: query.workspace_id,
          createdByUserId: query.created_by_user_id,
        },
      }),
    );
}
