import type { Store } from '@apikeys/store';
import type { KeyChangeFeed } from '../../change-feed/key-change-feed.js';
import type { Clock } from '../../clock.js';
import { ApiKeysService } from '../../domain/api-keys-service.js';
import { AuditEventsService } from '../../domain/audit-events-service.js';
import type { UsageRecorder } from '../../verification/usage-recorder.js';
import { UsageReports } from '../../verification/usage-reports.js';
import { type KeysBySecret, VerificationService } from '../../verification/verification-service.js';

/** The domain services the handlers call, and the clock they read the moment of a request from. */
export interface Services {
  apiKeys: ApiKeysService;
  auditEvents: AuditEventsService;
  verification: VerificationService;
  /** Gateways' reports of the keys they found valid from memory, noted in `usage` when they count. */
  usageReports: UsageReports;
  changeFeed: KeyChangeFeed;
  clock: Clock;
}

/** What the services are built from besides the store. */
export interface ServiceParts {
  clock: Clock;
  /** Where verification reads keys by their secrets' hash: the store itself, or a cache in front of it. */
  keysBySecret: KeysBySecret;
  /** Told of every valid verification; nothing is recorded when undefined. */
  usage: UsageRecorder | undefined;
  changeFeed: KeyChangeFeed;
}

/** The services on one store. */
export function servicesOn(store: Store, { clock, keysBySecret, usage, changeFeed }: ServiceParts): Services {
  return {
    apiKeys: new ApiKeysService(store),
    auditEvents: new AuditEventsService(store),
    verification: new VerificationService(keysBySecret, usage),
    usageReports: new UsageReports(store, usage),
    changeFeed,
    clock,
  };
}
