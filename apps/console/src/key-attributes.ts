import type { ApiKey } from '@apikeys/client';
import { isPermissionName, metadataProblem, permissionsProblem } from '@apikeys/permissions';

/** A key's metadata, as the API returns and takes it. */
export type KeyMetadata = ApiKey['metadata'];

// Reading the console's fields: the text a person typed, as the value the API takes, or why it cannot be sent. The
// rules are the spec's, from @apikeys/permissions, as the server applies them.

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
    return { problem: `metadata: not valid JSON (${error instanceof Error ? error.message : String(error)})` };
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
  if (name === '' || isPermissionName(name)) {
    return undefined;
  }
  return `${JSON.stringify(name)} is not a permission name, such as documents.read, documents.* or *`;
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
