import { toApiKeyJson as toApiKeyJsonV2023_06_01 } from '../serializers/api-key.js';
import { toApiKeyJson as toApiKeyJsonV2026_10_21 } from '../serializers/api-key-v2026_10_21.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2023_06_01, V2026_10_21 } from './api-versions.js';
import { serializeContext } from './caller-context.js';
import type { Services } from './services.js';

/** `getApiKey`: one key of the organization, as of the moment of the request. */
export const getApiKey = {
  v2023_06_01:
    ({ apiKeys, clock }: Services): OperationHandler<V2023_06_01, 'getApiKey'> =>
    async ({ caller, path }) =>
      toApiKeyJsonV2023_06_01(await apiKeys.getApiKey(caller.organizationId, path.api_key_id), clock()),

  v2026_10_21:
    ({ apiKeys, clock }: Services): OperationHandler<V2026_10_21, 'getApiKey'> =>
    async ({ caller, path }) => {
      const context = await serializeContext(caller, clock);
      return toApiKeyJsonV2026_10_21(await apiKeys.getApiKey(caller.organizationId, path.api_key_id), context);
    },
};
