import { NOTHING, OPERATOR_CHANGES } from '../audit-trail/audit-events.js';
import { recordCreation } from '../audit-trail/record-event.js';
import type { CoreCalls } from '../core/core-calls.js';
import type { StoreCore } from '../core/store-core.js';
import { newId } from '../random.js';
import { nowMicros } from '../time.js';
import type { OrganizationRecord, OrganizationStore } from '../types.js';

const ORGANIZATION_COLUMNS = ['id', 'name', 'default_workspace_id as defaultWorkspaceId'] as const;

/** Creates an organization with a new default workspace, and records its creation. */
export async function createOrganization(
  core: StoreCore,
  name: string,
  context = OPERATOR_CHANGES,
): Promise<OrganizationRecord> {
  const organization = { id: newId('org'), name, defaultWorkspaceId: newId('wrkspc') };
  const createdAt = nowMicros();
  return core.inTransaction(async (trx) => {
    await trx.db
      .insertInto('organizations')
      .values({
        id: organization.id,
        name,
        default_workspace_id: organization.defaultWorkspaceId,
        created_at: createdAt,
      })
      .execute();
    const target = { type: 'organization' as const, id: organization.id };
    await recordCreation(trx, { organizationId: organization.id, target, after: { ...NOTHING, name } }, context);
    return organization;
  });
}

/** Every organization, oldest first. */
export async function listOrganizations(core: StoreCore): Promise<OrganizationRecord[]> {
  return core.db.selectFrom('organizations').select(ORGANIZATION_COLUMNS).orderBy('created_at').orderBy('id').execute();
}

/** An organization, by its ID. */
export async function getOrganization(core: StoreCore, id: string): Promise<OrganizationRecord | undefined> {
  return core.db.selectFrom('organizations').select(ORGANIZATION_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** The calls of `OrganizationStore`. */
export const ORGANIZATION_CALLS = {
  createOrganization,
  listOrganizations,
  getOrganization,
} satisfies CoreCalls<OrganizationStore>;
