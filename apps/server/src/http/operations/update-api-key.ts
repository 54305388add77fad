import { toApiKeyJson as toApiKeyJsonV2023_06_01 } from '../serializers/api-key.js';
import { toApiKeyJson as toApiKeyJsonV2026_10_21 } from '../serializers/api-key-v2026_10_21.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2023_06_01, V2026_10_21 } from './api-versions.js';
import { serializeContext } from './caller-context.js';
import { expiresAtOf } from './request-values.js';
import type { Services } from './services.js';

/** `updateApiKey`: changes the fields a request gives, and answers with the key as it is afterwards. */
export const updateApiKey = {
  /** A `null` status, like an omitted one, leaves it unchanged. */
  v2023_06_01:
    ({ apiKeys, clock }: Services): OperationHandler<V2023_06_01, 'updateApiKey'> =>
    async ({ caller, changes, path, body }) => {
      const now = clock();
      const key = await apiKeys.updateApiKey(
        caller.organizationId,
        path.api_key_id,
        { name: body.name, status: body.status ?? undefined, now },
        changes,
      );
      return toApiKeyJsonV2023_06_01(key, now);
    },

  /**
   * `null` leaves a field unchanged, except `expires_at`, where it removes the expiry; `permissions` and `metadata`
   * replace the whole value.
   */
  v2026_10_21:
    ({ apiKeys, clock }: Services): OperationHandler<V2026_10_21, 'updateApiKey'> =>
    async ({ caller, changes, path, body }) => {
      const context = await serializeContext(caller, clock);
      const key = await apiKeys.updateApiKey(
        caller.organizationId,
        path.api_key_id,
        {
          name: body.name ?? undefined,
          status: body.status ?? undefined,
          expiresAt: expiresAtOf(body.expires_at),
          permissions: body.permissions ?? undefined,
          metadata: body.metadata ?? undefined,
          now: context.now,
        },
        changes,
      );
      return toApiKeyJsonV2026_10_21(key, context);
    },
};
