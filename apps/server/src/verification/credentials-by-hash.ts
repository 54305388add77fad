import type { Credential, SecretKind } from '@apikeys/store';

/** Where callers' keys are read by their secret's hash: the store, or a cache in front of it. */
export interface CredentialsByHash {
  findCredential(secretHash: string, kind?: SecretKind): Promise<Credential>;
}
