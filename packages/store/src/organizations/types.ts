import type { ChangeContext } from '../shared-types.js';

/** An organization: the tenant every admin key and API key belongs to. */
export interface OrganizationRecord {
  id: string;
  name: string;
  /**
   * The ID (`wrkspc_...`) of the organization's default workspace, the one a key gets when none is named. Records
   * of its keys say null, never this ID (`ApiKeyRecord.workspaceId`).
   */
  defaultWorkspaceId: string;
}

/** The store's organizations. */
export interface OrganizationStore {
  createOrganization(name: string, context?: ChangeContext): Promise<OrganizationRecord>;
  listOrganizations(): Promise<OrganizationRecord[]>;
  getOrganization(id: string): Promise<OrganizationRecord | undefined>;
}
