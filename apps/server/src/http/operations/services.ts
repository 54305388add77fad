import type { Store } from '@apikeys/store';
import { ApiKeysService } from '../../domain/api-keys-service.js';
import { AuditEventsService } from '../../domain/audit-events-service.js';
import type { UsageRecorder } from '../../verification/usage-recorder.js';
import { type KeysBySecret, VerificationService } from '../../verification/verification-service.js';

/** The domain services the handlers call. */
export interface Services {
  apiKeys: ApiKeysService;
  auditEvents: AuditEventsService;
  verification: VerificationService;
}

/**
 * The services on one store; verification reads keys through `keysBySecret` (a cache) when given, and tells `usage`
 * of every valid verification.
 */
export function servicesOn(store: Store, keysBySecret: KeysBySecret = store, usage?: UsageRecorder): Services {
  return {
    apiKeys: new ApiKeysService(store),
    auditEvents: new AuditEventsService(store),
    verification: new VerificationService(keysBySecret, usage),
  };
}
