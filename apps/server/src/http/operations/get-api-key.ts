import type { ApiKeysService } from '../../domain/api-keys-service.js';
import { toApiKeyJson } from '../serializers/api-key.js';
import type { OperationHandler } from '../typed-handler.js';

/** `GET /v1/organizations/api_keys/{api_key_id}` */
export function getApiKey(service: ApiKeysService): OperationHandler<'getApiKey'> {
  return async ({ caller, path }) => toApiKeyJson(await service.getApiKey(caller.organizationId, path.api_key_id));
}
