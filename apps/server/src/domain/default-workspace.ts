import type { Store } from '@apikeys/store';

/**
 * The default workspace between storage and the API: its keys are stored with a null workspace, while the API (from
 * version `v2026_10_21`) names it by its real ID, in what it shows and in what it is asked. This module translates both
 * ways; the real ID is read from the store when a request first needs it (`DefaultWorkspaces`).
 */

/** The real ID of the caller's default workspace, read when first asked for. */
export type DefaultWorkspaceId = () => Promise<string>;

/** A stored key's workspace as the API shows it: the default workspace by its real ID. */
export function shownWorkspaceId(storedWorkspaceId: string | null | undefined, defaultWorkspaceId: string): string {
  return storedWorkspaceId ?? defaultWorkspaceId;
}

/**
 * The workspace a new key is stored in, for the `workspace_id` a request names: undefined (the default workspace)
 * for the default workspace's real ID or none, null for organization scope, any other ID as it is.
 */
export function storedWorkspaceOfNewKey(
  requested: string | null | undefined,
  defaultWorkspaceId: string,
): string | null | undefined {
  return requested === defaultWorkspaceId ? undefined : requested;
}

/**
 * The store's workspace filter for the `workspace_id` a list asks for: the default workspace's real ID asks for
 * null. The real ID is read only when a workspace is asked for.
 */
export async function storedWorkspaceFilter(
  requested: string | undefined,
  defaultWorkspaceId: DefaultWorkspaceId,
): Promise<string | null | undefined> {
  return requested !== undefined && requested === (await defaultWorkspaceId()) ? null : requested;
}

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
