import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';
import * as coveringListIndexes from './0002-covering-list-indexes.js';
import * as postgresListIndexes from './0003-postgres-list-indexes.js';
import * as expiryPrincipalsDefaultWorkspaces from './0004-expiry-principals-default-workspaces.js';
import * as auditEvents from './0005-audit-events.js';
import * as auditEventsUnlockedOrganization from './0006-audit-events-unlocked-organization.js';
import * as verifierKeys from './0007-verifier-keys.js';
import * as apiKeyUsage from './0008-api-key-usage.js';
import * as expiriesWithinRange from './0009-expiries-within-range.js';
import * as permissionsAndMetadata from './0010-permissions-and-metadata.js';

/** Every migration, in order. Names sort lexically; never rename or edit one that has shipped. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-covering-list-indexes': coveringListIndexes,
  '0003-postgres-list-indexes': postgresListIndexes,
  '0004-expiry-principals-default-workspaces': expiryPrincipalsDefaultWorkspaces,
  '0005-audit-events': auditEvents,
  '0006-audit-events-unlocked-organization': auditEventsUnlockedOrganization,
  '0007-verifier-keys': verifierKeys,
  '0008-api-key-usage': apiKeyUsage,
  '0009-expiries-within-range': expiriesWithinRange,
  '0010-permissions-and-metadata': permissionsAndMetadata,
};

/** Supplies the migrations from code, so they work the same from source, from a bundle and in tests. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
