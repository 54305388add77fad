import { type KeyMetadata, metadataText } from '../key-attributes.js';

/** A key's permissions, each a chip, in the order the key holds them; `None` for none. */
export function PermissionList({ permissions }: { permissions: readonly string[] }) {
  if (permissions.length === 0) {
    return 'None';
  }
  return (
    <ul className="chips">
      {permissions.map((name) => (
        <li key={name}>
          <code>{name}</code>
        </li>
      ))}
    </ul>
  );
}

/** A key's metadata as indented JSON; `None` for none. */
export function MetadataView({ metadata }: { metadata: KeyMetadata }) {
  const text = metadataText(metadata);
  return text === '' ? 'None' : <pre className="json">{text}</pre>;
}
