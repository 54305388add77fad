import { namesGranting } from './permission-names.js';

declare const heldBrand: unique symbol;

/** A key's permission names, indexed once so that a check costs a few set lookups. */
export type HeldPermissions = ReadonlySet<string> & { readonly [heldBrand]: true };

/** Indexes a key's permission names for `holdsPermission` and `satisfiesPermissionQuery`. */
export function heldPermissions(names: readonly string[]): HeldPermissions {
  return new Set(names) as ReadonlySet<string> as HeldPermissions;
}

/** Whether one of the held names grants any of `granting`, the result of `namesGranting` for a required name. */
export function holdsAnyOf(held: HeldPermissions, granting: readonly string[]): boolean {
  for (let i = 0; i < granting.length; i++) {
    if (held.has(granting[i] as string)) {
      return true;
    }
  }
  return false;
}

/** Whether the held names grant the permission name `required` (itself, or a wildcard over it). */
export function holdsPermission(held: HeldPermissions, required: string): boolean {
  return holdsAnyOf(held, namesGranting(required));
}
