import type { ApiKeysService } from '../../domain/api-keys-service.js';
import type { OperationHandler } from '../typed-handler.js';

/** `GET /v1/organizations/api_keys` */
export function listApiKeys(service: ApiKeysService, defaultLimit: number): OperationHandler<'listApiKeys'> {
  return ({ caller, query }) =>
    service.list(caller.organizationId, {
      limit: query.limit ?? defaultLimit,
      beforeId: query.before_id,
      afterId: query.after_id,
      filters: {
        status: query.status,
        workspaceId: query.workspace_id,
        createdByUserId: query.created_by_user_id,
      },
    });
}
