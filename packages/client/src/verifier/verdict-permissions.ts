import {
  type HeldPermissions,
  heldPermissions,
  PermissionQueryError,
  permissionQuery,
  satisfiesPermissionQuery,
} from '@apikeys/permissions';
import type { KeyVerification } from '../types.js';

/** The permissions each remembered key holds, indexed once per verdict (a verdict is answered many times). */
const held = new WeakMap<object, HeldPermissions>();

function heldBy(key: NonNullable<KeyVerification['key']>): HeldPermissions {
  let permissions = held.get(key);
  if (permissions === undefined) {
    permissions = heldPermissions(key.permissions);
    held.set(key, permissions);
  }
  return permissions;
}

/**
 * What a permission requirement makes of the verdict of a secret alone, as the server decides it: a `VALID` key
 * that does not satisfy it is `INSUFFICIENT_PERMISSIONS` (with the key); every other verdict stands. Null when the
 * evaluator refuses the requirement (the server answers that with a `400` naming the position).
 */
export function withRequirement(text: string): ((verdict: KeyVerification) => KeyVerification) | null {
  let query: ReturnType<typeof permissionQuery>;
  try {
    query = permissionQuery(text);
  } catch (error) {
    if (error instanceof PermissionQueryError) {
      return null;
    }
    throw error;
  }
  return (verdict) =>
    verdict.code !== 'VALID' || verdict.key === null || satisfiesPermissionQuery(query, heldBy(verdict.key))
      ? verdict
      : { valid: false, code: 'INSUFFICIENT_PERMISSIONS', key: verdict.key };
}

/**
 * The verdict of the secret alone, read from an answer to a verification with a requirement: a key that fell short
 * of it is otherwise valid.
 */
export function withoutRequirement(verdict: KeyVerification): KeyVerification {
  return verdict.code === 'INSUFFICIENT_PERMISSIONS' ? { valid: true, code: 'VALID', key: verdict.key } : verdict;
}
