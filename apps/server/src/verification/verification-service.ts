import {
  type HeldPermissions,
  heldPermissions,
  type PermissionQuery,
  satisfiesPermissionQuery,
} from '@apikeys/permissions';
import {
  type ApiKeyRecord,
  type EffectiveApiKeyStatus,
  type EpochMicros,
  effectiveStatus,
  hashSecret,
  type KeyOfSecret,
  secretForm,
  secretKind,
} from '@apikeys/store';

/**
 * What a secret turned out to be for one organization: none of its keys, or one of them with its status now and
 * whether it satisfies the permission requirement of the request (always, without one).
 */
export type Verification =
  | { found: false }
  | { found: true; key: ApiKeyRecord; status: EffectiveApiKeyStatus; permitted: boolean };

const NOT_FOUND: Verification = { found: false };

/** The held permissions of each key record, indexed once per record (a cached key is verified many times). */
const held = new WeakMap<ApiKeyRecord, HeldPermissions>();

function heldBy(key: ApiKeyRecord): HeldPermissions {
  let permissions = held.get(key);
  if (permissions === undefined) {
    permissions = heldPermissions(key.permissions ?? []);
    held.set(key, permissions);
  }
  return permissions;
}

/** Where verification reads a key by its secret's hash: the store, or a cache in front of it. */
export interface KeysBySecret {
  findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined>;
}

/** Verifies API keys' secrets for the gateways of an organization. */
export class VerificationService {
  constructor(
    private readonly keys: KeysBySecret,
    /** Told of every valid verification, to record when the key was last used. */
    private readonly usage?: { record(keyId: string, organizationId: string, usedAt: EpochMicros): void },
  ) {}

  /**
   * What `secret` is for `organizationId` at `now`. A secret that is not an API key's by its prefix, or whose
   * checksum does not hold, is not found without a lookup; a key of another organization is not found either, just
   * like an unknown secret. Secrets issued before the checksum existed are looked up as before.
   */
  async verifyApiKey(
    organizationId: string,
    secret: string,
    now: EpochMicros,
    requirement?: PermissionQuery,
  ): Promise<Verification> {
    const form = secretForm(secret);
    if (secretKind(secret) !== 'apiKey' || (form !== 'checksummed' && form !== 'legacy')) {
      return NOT_FOUND;
    }
    const found = await this.keys.findApiKeyBySecretHash(hashSecret(secret));
    if (!found || found.organizationId !== organizationId) {
      return NOT_FOUND;
    }
    const status = effectiveStatus(found.apiKey, now);
    // Only an otherwise valid key is checked: the other outcomes come first.
    const permitted =
      requirement === undefined || status !== 'active' || satisfiesPermissionQuery(requirement, heldBy(found.apiKey));
    if (status === 'active' && permitted) {
      this.usage?.record(found.apiKey.id, organizationId, now);
    }
    return { found: true, key: found.apiKey, status, permitted };
  }
}
