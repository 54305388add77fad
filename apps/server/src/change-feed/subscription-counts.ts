import type { CredentialRef } from '@apikeys/store';

/** Who subscribes: the organization whose keys it hears of, and the key it authenticated with. */
export interface SubscriptionOwner {
  organizationId: string;
  credential: CredentialRef;
}

/** The quotas of one process's subscriptions: the most one credential and one organization may hold at once. */
export interface SubscriptionQuotas {
  maxPerCredential: number;
  maxPerOrganization: number;
}

/** Which quota an owner is at. */
export type QuotaReached = 'credential_quota' | 'organization_quota';

/** A map key of a credential, unique across kinds. */
const credentialKey = ({ kind, id }: CredentialRef) => `${kind}:${id}`;

/**
 * How many subscriptions each credential and each organization holds in this process, so that one tenant can hold
 * only its share of them whatever it sends: a count per key, no list of the subscriptions (those are the feed's).
 */
export class SubscriptionCounts {
  readonly #byCredential = new Map<string, number>();
  readonly #byOrganization = new Map<string, number>();

  constructor(private readonly quotas: SubscriptionQuotas) {}

  /** The quota `owner` has reached (one more subscription would pass it), or undefined. */
  reached(owner: SubscriptionOwner): QuotaReached | undefined {
    if ((this.#byCredential.get(credentialKey(owner.credential)) ?? 0) >= this.quotas.maxPerCredential) {
      return 'credential_quota';
    }
    if ((this.#byOrganization.get(owner.organizationId) ?? 0) >= this.quotas.maxPerOrganization) {
      return 'organization_quota';
    }
    return undefined;
  }

  add(owner: SubscriptionOwner): void {
    increment(this.#byCredential, credentialKey(owner.credential), 1);
    increment(this.#byOrganization, owner.organizationId, 1);
  }

  remove(owner: SubscriptionOwner): void {
    increment(this.#byCredential, credentialKey(owner.credential), -1);
    increment(this.#byOrganization, owner.organizationId, -1);
  }
}

/** Adds `by` to the count of `key`, forgetting a count that falls to 0 (a map of live owners only). */
function increment(counts: Map<string, number>, key: string, by: number): void {
  const count = (counts.get(key) ?? 0) + by;
  if (count > 0) {
    counts.set(key, count);
  } else {
    counts.delete(key);
  }
}
