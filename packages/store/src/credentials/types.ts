import type { SecretKind } from '../secrets.js';
import type { ChangeContext } from '../shared-types.js';

/** Whether an admin key may call the admin API. */
export type AdminKeyStatus = 'active' | 'disabled';

/** Whether a verifier key may verify API keys' secrets. */
export type VerifierKeyStatus = 'active' | 'disabled';

/** An admin key as stored: never the secret, only what identifies and describes it. */
export interface AdminKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: AdminKeyStatus;
}

/** A verifier key as stored: like an admin key, but it may only verify API keys' secrets. */
export interface VerifierKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  partialKeyHint: string;
  status: VerifierKeyStatus;
}

/** A created admin key with its secret, which exists only in this value and is never stored. */
export interface CreatedAdminKey {
  adminKey: AdminKeyRecord;
  secret: string;
}

/** A created verifier key with its secret, which exists only in this value and is never stored. */
export interface CreatedVerifierKey {
  verifierKey: VerifierKeyRecord;
  secret: string;
}

/** What a secret (by its hash) turned out to be. */
export type Credential =
  | { kind: 'admin_key'; adminKey: AdminKeyRecord }
  | { kind: 'verifier_key'; verifierKey: VerifierKeyRecord }
  | { kind: 'api_key'; organizationId: string }
  | { kind: 'unknown' };

/** An admin key or a verifier key, by its ID. */
export interface CredentialRef {
  kind: 'admin_key' | 'verifier_key';
  id: string;
}

/** The store's credentials: the admin keys that call the admin API, and the verifier keys that verify API keys. */
export interface CredentialStore {
  createAdminKey(input: { organizationId: string; name: string }, context?: ChangeContext): Promise<CreatedAdminKey>;
  setAdminKeyStatus(id: string, status: AdminKeyStatus, context?: ChangeContext): Promise<AdminKeyRecord | undefined>;
  /** The number of active admin keys, in every organization: zero means nobody can call the API yet. */
  countActiveAdminKeys(): Promise<number>;
  /**
   * Finds what a secret hash belongs to: an admin key, a verifier key, a regular API key, or nothing. With `kind`
   * (from the secret's prefix), only keys of that kind are looked at.
   */
  findCredential(secretHash: string, kind?: SecretKind): Promise<Credential>;
  /**
   * Which of `credentials` are active now (disabled and unknown ones are left out): for what was authenticated
   * earlier and lasts, such as a change feed subscription, when the changes made meanwhile cannot be told.
   */
  findActiveCredentials(credentials: readonly CredentialRef[]): Promise<CredentialRef[]>;

  /** Creates a verifier key of the organization (not audited: the trail records API keys and admin keys). */
  createVerifierKey(input: { organizationId: string; name: string }): Promise<CreatedVerifierKey>;
  setVerifierKeyStatus(id: string, status: VerifierKeyStatus): Promise<VerifierKeyRecord | undefined>;
}
