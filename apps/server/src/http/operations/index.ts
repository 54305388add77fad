import type { ApiKeysService } from '../../domain/api-keys-service.js';
import type { Readiness } from '../../health/readiness.js';
import type { OperationHandlers } from '../typed-handler.js';
import { getApiKey } from './get-api-key.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';
import { listApiKeys } from './list-api-keys.js';
import { updateApiKey } from './update-api-key.js';

/** The handler of every operation in the spec, keyed by operationId. */
export function operationHandlers(service: ApiKeysService, readiness: Readiness): OperationHandlers {
  return {
    getHealth: getHealth(),
    getReadiness: getReadiness(readiness),
    listApiKeys: listApiKeys(service),
    getApiKey: getApiKey(service),
    updateApiKey: updateApiKey(service),
  };
}
