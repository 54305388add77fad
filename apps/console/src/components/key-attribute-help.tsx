import { KEY_METADATA, PERMISSIONS } from '@apikeys/api-types';

/** What the permissions field takes, with the spec's limits, under the field, which names `id` in its description. */
export function PermissionsHelp({ id }: { id: string }) {
  return (
    <p id={id} className="muted">
      One permission name a line, such as <code>documents.read</code>. <code>documents.*</code> grants all of{' '}
      <code>documents</code>, <code>*</code> everything. At most {PERMISSIONS.maxItems} names of at most{' '}
      {PERMISSIONS.nameMaxLength} characters. Empty: none.
    </p>
  );
}

/** What the metadata field takes, with the spec's limits, under the field, which names `id` in its description. */
export function MetadataHelp({ id }: { id: string }) {
  return (
    <p id={id} className="muted">
      At most {KEY_METADATA.maxSerializedBytes} bytes as compact JSON and {KEY_METADATA.maxDepth} levels deep; numbers
      within ±{Number.MAX_SAFE_INTEGER} (larger ones as strings). Empty: none.
    </p>
  );
}
