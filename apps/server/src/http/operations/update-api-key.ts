import type { ApiKeysService } from '../../domain/api-keys-service.js';
import { toApiKeyJson } from '../serializers/api-key.js';
import type { OperationHandler } from '../typed-handler.js';

/** `POST /v1/organizations/api_keys/{api_key_id}`: a `null` status, like an omitted one, leaves it unchanged. */
export function updateApiKey(service: ApiKeysService): OperationHandler<'updateApiKey'> {
  return async ({ caller, path, body }) =>
    toApiKeyJson(
      await service.updateApiKey(caller.organizationId, path.api_key_id, {
        name: body.name,
        status: body.status ?? undefined,
      }),
    );
}
