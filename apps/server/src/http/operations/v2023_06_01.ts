import type { Readiness } from '../../health/readiness.js';
import type { OperationHandlers } from '../typed-handler.js';
import type { V2023_06_01 } from './api-versions.js';
import { getApiKey } from './get-api-key.js';
import { getHealth } from './get-health.js';
import { getReadiness } from './get-readiness.js';
import { listApiKeys } from './list-api-keys.js';
import type { Services } from './services.js';
import { updateApiKey } from './update-api-key.js';

/** The handlers of the first API version, by operationId (each in `<operation-id>.ts`). */
export function v2023_06_01Handlers(services: Services, readiness: Readiness): OperationHandlers<V2023_06_01> {
  return {
    getHealth: getHealth(),
    getReadiness: getReadiness(readiness),
    listApiKeys: listApiKeys.v2023_06_01(services),
    getApiKey: getApiKey.v2023_06_01(services),
    updateApiKey: updateApiKey.v2023_06_01(services),
  };
}
