import { toApiKeyJson } from '../serializers/api-key-v2026_10_21.js';
import { toCreatedApiKeyJson } from '../serializers/created-api-key.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { creatorOf, serializeContext } from './caller-context.js';
import type { Services } from './services.js';

/** `rotateApiKey` (from version `v2026_10_21`): a new key in place of one, which expires after the grace period. */
export const rotateApiKey = {
  v2026_10_21:
    ({ apiKeys, clock }: Services): OperationHandler<V2026_10_21, 'rotateApiKey'> =>
    async ({ caller, changes, path, body }) => {
      const { created, previous, rotatedAt } = await apiKeys.rotateApiKey(
        caller.organizationId,
        path.api_key_id,
        { gracePeriodSeconds: body?.grace_period_seconds ?? 0, createdBy: creatorOf(caller) },
        changes,
      );
      // Both keys as they are at the moment of the rotation, which the store read under the old key's lock.
      const context = { ...(await serializeContext(caller, clock)), now: rotatedAt };
      return { ...toCreatedApiKeyJson(created, context), rotated_api_key: toApiKeyJson(previous, context) };
    },
};
