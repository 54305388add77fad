import { KEY_METADATA, PERMISSIONS } from '@apikeys/api-types';
import { jsonDepth, utf8ByteLength } from './json-measures.js';
import { metadataNumberProblem } from './metadata-numbers.js';
import { isPermissionName } from './permission-names.js';
import { quotable } from './quotable.js';

/** How much of a refused string a reason quotes. */
const QUOTED_LENGTH = 60;

/**
 * A short description of a refused item: a string quoted (and cut if long) when it may be (`quotable`), anything
 * else by its kind.
 */
function describe(value: unknown): string {
  if (typeof value === 'string') {
    if (!quotable(value, 'word')) {
      return 'a string (not repeated here)';
    }
    return JSON.stringify(value.length > QUOTED_LENGTH ? `${value.slice(0, QUOTED_LENGTH)}…` : value);
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** Why `value` is not a valid `Permissions` list (naming the offending item), or `undefined` when it is one. */
export function permissionsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) {
    return 'permissions: must be an array of permission names';
  }
  if (value.length > PERMISSIONS.maxItems) {
    return `permissions: more than ${PERMISSIONS.maxItems} names`;
  }
  const seen = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (!isPermissionName(item)) {
      return `permissions[${i}]: ${describe(item)} is not a permission name`;
    }
    if (seen.has(item)) {
      return `permissions[${i}]: ${describe(item)} is listed twice`;
    }
    seen.add(item);
  }
  return undefined;
}

function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Why `value` is not a valid `KeyMetadata` object, or `undefined` when it is one: a plain JSON object whose compact
 * JSON is at most `maxSerializedBytes` bytes of UTF-8, which nests at most `maxDepth` levels (itself the first), and
 * whose numbers JSON gives back as they are (finite, within ±(2^53 − 1)).
 */
export function metadataProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) {
    return 'metadata: must be a JSON object';
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    // JSON.stringify recurses: a hostile, deeply nested value overflows its stack before any size could be counted.
    return error instanceof RangeError
      ? `metadata: nested too deeply, at most ${KEY_METADATA.maxDepth} levels`
      : 'metadata: cannot be written as JSON';
  }
  if (!json.startsWith('{')) {
    return 'metadata: must be a JSON object';
  }
  const bytes = utf8ByteLength(json);
  if (bytes > KEY_METADATA.maxSerializedBytes) {
    return `metadata: ${bytes} bytes as JSON, at most ${KEY_METADATA.maxSerializedBytes}`;
  }
  const depth = jsonDepth(json);
  if (depth > KEY_METADATA.maxDepth) {
    return `metadata: nested ${depth} levels deep, at most ${KEY_METADATA.maxDepth}`;
  }
  return metadataNumberProblem(value);
}
