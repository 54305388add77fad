import { toKeyVerificationJson } from '../serializers/key-verification.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import { serializeContext } from './caller-context.js';
import { permissionRequirementOf } from './request-values.js';
import type { Services } from './services.js';

/** `verifyApiKey` (from version `v2026_10_21`): what a secret is for the caller's organization, for its gateways. */
export const verifyApiKey = {
  v2026_10_21:
    ({ verification, clock }: Services): OperationHandler<V2026_10_21, 'verifyApiKey'> =>
    async ({ caller, body }) => {
      const requirement = permissionRequirementOf(body.permissions);
      const context = await serializeContext(caller, clock);
      const verdict = await verification.verifyApiKey(caller.organizationId, body.key, context.now, requirement);
      return toKeyVerificationJson(verdict, caller.organizationId, context);
    },
};
