import { KEY_METADATA, PERMISSIONS } from '@apikeys/api-types';
import type { ApiKey } from '@apikeys/client';

/** A key's metadata, as the API returns and takes it. */
export type KeyMetadata = ApiKey['metadata'];

// The spec's rules on a key's attributes, with the signatures of the shared package @apikeys/permissions
// (`isPermissionName`, `permissionsProblem`, `metadataProblem`): once that package is on main, these three give way to
// an import of it, and the readers below stay as they are. The messages here are the console's, for a person.

const PERMISSION_NAME = new RegExp(PERMISSIONS.namePattern);

/** What a permission name looks like, after a refused one. */
const NAME_RULE = 'lowercase letters, digits, _ and -, in segments joined by dots, such as documents.read';

/** Whether `value` is a `PermissionName`: dotted lowercase segments, optionally ending in `.*`, or `*` alone. */
export function isPermissionName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= PERMISSIONS.nameMaxLength && PERMISSION_NAME.test(value);
}

/** A permission name as a message quotes it, cut if long. */
function quote(name: string): string {
  return JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
}

/** Why one name is not a `PermissionName`, or undefined when it is one. */
function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') {
    return `${JSON.stringify(name) ?? String(name)} is not a permission name: a name is text.`;
  }
  if (name.length > PERMISSIONS.nameMaxLength) {
    return `${quote(name)} has ${name.length} characters; a permission name has at most ${PERMISSIONS.nameMaxLength}.`;
  }
  if (!PERMISSION_NAME.test(name)) {
    return `${quote(name)} is not a permission name: ${NAME_RULE}; a last segment * grants everything under it.`;
  }
  return undefined;
}

/** Why `value` is not a valid `Permissions` list, naming the offending name; undefined when it is one. */
export function permissionsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) {
    return 'Permissions are a list of permission names.';
  }
  if (value.length > PERMISSIONS.maxItems) {
    return `A key has at most ${PERMISSIONS.maxItems} permissions; this list has ${value.length}.`;
  }
  const seen = new Set<unknown>();
  for (const name of value) {
    const problem = nameProblem(name);
    if (problem !== undefined) {
      return problem;
    }
    if (seen.has(name)) {
      return `${quote(name as string)} is listed twice.`;
    }
    seen.add(name);
  }
  return undefined;
}

/** The number of bytes of `text` in UTF-8, as the API counts the metadata's compact JSON. */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/**
 * How deep the JSON text `json` nests: an object or array at the top is level 1, and each one within adds one. It
 * scans the text rather than walking a value, so no input can exhaust the stack.
 */
export function jsonDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const char = json[i];
    if (inString) {
      if (char === '\\') {
        i++;
      } else if (char === '"') {
        inString = false;
      }
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth++;
      deepest = Math.max(deepest, depth);
    } else if (char === '}' || char === ']') {
      depth--;
    }
  }
  return deepest;
}

/** What a JSON value is, in words, for a message that says it is not an object. */
function kindOf(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return typeof value === 'string' ? 'a string' : typeof value === 'number' ? 'a number' : typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Why `value` is not a valid `KeyMetadata`, or undefined when it is one: a JSON object whose compact JSON is at most
 * `maxSerializedBytes` bytes of UTF-8 and which nests at most `maxDepth` levels (itself the first).
 */
export function metadataProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) {
    return `Metadata is a JSON object, such as {"owner": "team-billing"}; this is ${kindOf(value)}.`;
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    // JSON.stringify recurses: a value nested thousands of levels deep overflows its stack before it can be measured.
    return `Metadata nests too deeply: at most ${KEY_METADATA.maxDepth} levels.`;
  }
  const bytes = utf8Bytes(json);
  if (bytes > KEY_METADATA.maxSerializedBytes) {
    return `Metadata is ${bytes} bytes as compact JSON; at most ${KEY_METADATA.maxSerializedBytes}.`;
  }
  const depth = jsonDepth(json);
  if (depth > KEY_METADATA.maxDepth) {
    return `Metadata nests ${depth} levels deep; at most ${KEY_METADATA.maxDepth} (the object itself is the first).`;
  }
  return undefined;
}

// Reading the console's fields: the text a person typed, as the value the API takes, or why it cannot be sent.

/** A field's text read as a value for the API, or the problem shown under the field. */
export type Reading<Value> = { value: Value } | { problem: string };

/**
 * The permissions typed in a field: names separated by new lines, commas or spaces (none can be in a name), empty
 * entries ignored, in the order typed.
 */
export function readPermissions(text: string): Reading<string[]> {
  const names = text.split(/[\s,]+/).filter((name) => name !== '');
  const problem = permissionsProblem(names);
  return problem === undefined ? { value: names } : { problem };
}

/** Permissions as their field shows them: one name a line. */
export function permissionsText(permissions: readonly string[]): string {
  return permissions.join('\n');
}

/** The metadata typed in a field: a JSON object, or nothing for none (`{}`). */
export function readMetadata(text: string): Reading<KeyMetadata> {
  if (text.trim() === '') {
    return { value: {} };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `This is not valid JSON: ${error instanceof Error ? error.message : String(error)}.` };
  }
  const problem = metadataProblem(value);
  return problem === undefined ? { value: value as KeyMetadata } : { problem };
}

/** Metadata as its field and the key's page show it: indented JSON, or nothing for none. */
export function metadataText(metadata: KeyMetadata): string {
  return Object.keys(metadata).length === 0 ? '' : JSON.stringify(metadata, null, 2);
}

/** Why the text of the list's permission filter cannot be sent, or undefined; empty (no filter) is fine. */
export function permissionFilterProblem(text: string): string | undefined {
  const name = text.trim();
  return name === '' ? undefined : nameProblem(name);
}

/** The fields of an update that change the key: the permissions and the metadata that differ from its own. */
export function changedAttributes(
  apiKey: Pick<ApiKey, 'permissions' | 'metadata'>,
  permissions: string[],
  metadata: KeyMetadata,
): { permissions?: string[]; metadata?: KeyMetadata } {
  const samePermissions =
    permissions.length === apiKey.permissions.length &&
    permissions.every((name, index) => name === apiKey.permissions[index]);
  // The server keeps the metadata as given, keys in their order: compact JSON compares exactly that.
  const sameMetadata = JSON.stringify(metadata) === JSON.stringify(apiKey.metadata);
  return {
    ...(samePermissions ? {} : { permissions }),
    ...(sameMetadata ? {} : { metadata }),
  };
}
