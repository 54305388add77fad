import type { ApiKeysService } from '../../domain/api-keys-service.js';
import type { OperationHandler } from '../typed-handler.js';

/** `POST /v1/organizations/api_keys/{api_key_id}` */
export function updateApiKey(service: ApiKeysService): OperationHandler<'updateApiKey'> {
  return ({ caller, path, body }) =>
    service.update(caller.organizationId, path.api_key_id, { name: body.name, status: body.status });
}
