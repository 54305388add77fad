import type { Store } from '@apikeys/store';
import { ApiKeysService } from '../../domain/api-keys-service.js';
import { AuditEventsService } from '../../domain/audit-events-service.js';

/** The domain services the handlers call. */
export interface Services {
  apiKeys: ApiKeysService;
  auditEvents: AuditEventsService;
}

/** The services on one store. */
export function servicesOn(store: Store): Services {
  return { apiKeys: new ApiKeysService(store), auditEvents: new AuditEventsService(store) };
}
