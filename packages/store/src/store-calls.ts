import type { Store } from './types.js';

/** The lifecycle calls that a wrapper of the store handles each in its own way: they are not simply timed or run. */
export type SpecialStoreCall = 'transaction' | 'watchKeyChanges' | 'poolStats' | 'close';

/** Every other call of `Store`: one call to the database, which a wrapper wraps like all the others. */
export type StoreCall = Exclude<keyof Store, SpecialStoreCall>;

/**
 * Each call of `Store` but the special ones, and whether it may change something (`write`) or only reads. A Record,
 * so that a call added to an aggregate's interface is a compile error here until it is classified.
 */
export const STORE_CALLS: Readonly<Record<StoreCall, 'read' | 'write'>> = {
  createOrganization: 'write',
  listOrganizations: 'read',
  getOrganization: 'read',
  createAdminKey: 'write',
  setAdminKeyStatus: 'write',
  countActiveAdminKeys: 'read',
  findCredential: 'read',
  findActiveCredentials: 'read',
  createVerifierKey: 'write',
  setVerifierKeyStatus: 'write',
  findApiKeyBySecretHash: 'read',
  createApiKey: 'write',
  rotateApiKey: 'write',
  getApiKey: 'read',
  listApiKeys: 'read',
  updateApiKey: 'write',
  findKeysInUse: 'read',
  recordKeyUsage: 'write',
  listAuditEvents: 'read',
  getAuditEvent: 'read',
  ping: 'read',
};
