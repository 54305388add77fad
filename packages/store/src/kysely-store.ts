import type { Kysely } from 'kysely';
import { API_KEY_CALLS } from './api-keys/api-key-calls.js';
import { AUDIT_TRAIL_CALLS } from './audit-trail/audit-trail-calls.js';
import { recordEvent } from './audit-trail/record-event.js';
import { onCore } from './core/core-calls.js';
import type { DialectAdapter } from './core/dialect-adapter.js';
import { StoreCore } from './core/store-core.js';
import { CREDENTIAL_CALLS } from './credentials/credential-calls.js';
import { ORGANIZATION_CALLS } from './organizations/organization-calls.js';
import type { DatabaseSchema } from './schema.js';
import { SEEDING_PORT, type Seedable } from './seeding/seeding-port.js';
import type { ApiKeyStore, AuditTrailStore, CredentialStore, OrganizationStore, Store, UsageStore } from './types.js';
import { USAGE_CALLS } from './usage/usage-calls.js';

/** The store on any Kysely dialect: the engine's adapter does what differs between engines. */
export function kyselyStore(db: Kysely<DatabaseSchema>, adapter: DialectAdapter): Store & Seedable {
  return storeOn(new StoreCore(db, adapter));
}

/** The store whose calls run on `core`: every aggregate's, and the lifecycle's. */
function storeOn(core: StoreCore): Store & Seedable {
  return {
    ...onCore<OrganizationStore>(core, ORGANIZATION_CALLS),
    ...onCore<CredentialStore>(core, CREDENTIAL_CALLS),
    ...onCore<ApiKeyStore>(core, API_KEY_CALLS),
    ...onCore<UsageStore>(core, USAGE_CALLS),
    ...onCore<AuditTrailStore>(core, AUDIT_TRAIL_CALLS),
    transaction: (work) => core.inTransaction((inside) => work(storeOn(inside))),
    watchKeyChanges: (listener) => core.watchKeyChanges(listener),
    ping: () => core.ping(),
    poolStats: () => core.poolStats(),
    close: () => core.close(),
    [SEEDING_PORT]: {
      insertRows: (table, chunks) => core.bulkInsert(table, chunks),
      recordEvent: (facts, context) => recordEvent(core, facts, context),
    },
  };
}
