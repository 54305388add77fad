import type { Store } from '@apikeys/store';

/**
 * The real ID of each organization's default workspace, read from the store once per organization and kept: it
 * never changes once the organization exists. Only authenticated callers look one up, so the map holds at most one
 * entry per organization (organizations are created by operators, not by callers).
 */
export class DefaultWorkspaces {
  private readonly known = new Map<string, Promise<string>>();

  constructor(private readonly store: Store) {}

  /** The default workspace of an organization that exists. */
  of(organizationId: string): Promise<string> {
    let found = this.known.get(organizationId);
    if (!found) {
      found = this.read(organizationId);
      this.known.set(organizationId, found);
      // A failed read (the database is down, say) is not kept: the next request reads again.
      found.catch(() => this.known.delete(organizationId));
    }
    return found;
  }

  private async read(organizationId: string): Promise<string> {
    const organization = await this.store.getOrganization(organizationId);
    if (!organization) {
      throw new Error(`organization ${organizationId} of an active admin key does not exist`);
    }
    return organization.defaultWorkspaceId;
  }
}
