import type { Store } from '@apikeys/store';
import type { Clock } from '../../clock.js';
import { ApiKeysService } from '../../domain/api-keys-service.js';
import { AuditEventsService } from '../../domain/audit-events-service.js';
import type { UsageRecorder } from '../../verification/usage-recorder.js';
import { type KeysBySecret, VerificationService } from '../../verification/verification-service.js';

/** The domain services the handlers call, and the clock they read the moment of a request from. */
export interface Services {
  apiKeys: ApiKeysService;
  auditEvents: AuditEventsService;
  verification: VerificationService;
  clock: Clock;
}

/**
 * The services on one store; verification reads keys through `keysBySecret` (the store itself, or a cache in front
 * of it), and tells `usage` of every valid verification.
 */
export function servicesOn(
  store: Store,
  clock: Clock,
  keysBySecret: KeysBySecret = store,
  usage?: UsageRecorder,
): Services {
  return {
    apiKeys: new ApiKeysService(store),
    auditEvents: new AuditEventsService(store),
    verification: new VerificationService(keysBySecret, usage),
    clock,
  };
}
