/**
 * What `seedApiKeys` makes: keys spread evenly over the statuses, workspaces and users; about 3% of them expired
 * already, 10% expiring a day to a year from now, the others never; 2% bound to a principal (the user who created
 * them), half of those with organization scope.
 */
export interface SeedOptions {
  organizationId: string;
  count: number;
  /** Number of distinct workspace IDs; keys are spread over them plus the default workspace (null). */
  workspaces: number;
  /** Number of distinct creating users. */
  users: number;
  /** Seed of the pseudo-random spread of statuses, workspaces, users, expiries and principals. */
  seed: number;
  /**
   * Also spread the attributes of API version v2026_10_21: about 3% of keys already expired, 10% expiring a day to a
   * year later, 2% bound to their creating user (half of those with organization scope); three in five hold
   * permissions (`documents.read`, `documents.*`, `*`, `billing.read`...). Off by default, so that
   * seeded keys are what they were before that version (keys any status update may change).
   */
  lifecycle?: boolean | undefined;
}

/** What `seedAuditEvents` makes: `count` events about seeded keys, one millisecond apart, the newest about now. */
export interface SeedAuditEventsOptions {
  organizationId: string;
  count: number;
  /** Number of distinct keys the events are about. */
  targets: number;
  /** Number of distinct admin keys that made the changes. */
  actors: number;
  /** Seed of the pseudo-random spread of types, targets and actors. */
  seed: number;
}
