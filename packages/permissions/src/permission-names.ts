import { PERMISSIONS } from '@apikeys/api-types';

const PERMISSION_NAME = new RegExp(PERMISSIONS.namePattern);

/** Whether `value` is a `PermissionName`: dotted lower-case segments, optionally ending in `.*`, or `*` alone. */
export function isPermissionName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= PERMISSIONS.nameMaxLength && PERMISSION_NAME.test(value);
}

/**
 * Whether the held permission name grants the required one: the same name, `*`, or a wildcard `P.*` over it.
 * Both must be permission names.
 */
export function grants(held: string, required: string): boolean {
  if (held === required || held === '*') {
    return true;
  }
  // `P.*` grants every name that starts with `P.`; the dot keeps `documents.*` from granting `documentsx.read`.
  return held.endsWith('.*') && required.startsWith(held.slice(0, -1));
}

/**
 * Every held name that grants the permission name `name`, most specific first:
 * `documents.drafts.write` → `documents.drafts.write`, `documents.drafts.*`, `documents.*`, `*`.
 */
export function namesGranting(name: string): string[] {
  const result = [name];
  if (name === '*') {
    return result;
  }
  const end = name.endsWith('.*') ? name.length - 2 : name.length;
  for (let dot = name.lastIndexOf('.', end - 1); dot > 0; dot = name.lastIndexOf('.', dot - 1)) {
    result.push(`${name.slice(0, dot)}.*`);
  }
  result.push('*');
  return result;
}
