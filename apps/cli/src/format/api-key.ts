import type { API_VERSION } from '@apikeys/api-types';
import type { ApiKey, ApiVersion, CreatedApiKey, RotatedApiKey } from '@apikeys/client';
import { type Column, renderTable } from './table.js';
import { padEnd, printable } from './text.js';

/** An API key of any version: the first version's shape (`workspace_id`) or a later one's (`scope`, `expires_at`). */
export type AnyApiKey = ApiKey<ApiVersion>;
/** An API key as the first version (v2023_06_01) shows it. */
type FirstVersionKey = ApiKey<typeof API_VERSION>;
/** An API key as the later versions show it: with scope, principal and expiry. */
type ScopedKey = Exclude<AnyApiKey, FirstVersionKey>;

/** How a null `workspace_id` (the organization's default workspace) is shown. */
export const DEFAULT_WORKSPACE = '(default)';

/** How a field with nothing in it is shown. */
const NONE = '(none)';

/** What the CLI prints after a secret, which the API shows this once. */
export const SECRET_SHOWN_ONCE = 'Store the secret (key) now: it is shown this once and cannot be shown again.';

function isFirstVersionKey(key: AnyApiKey): key is FirstVersionKey {
  return !('scope' in key);
}

function isScopedKey(key: AnyApiKey): key is ScopedKey {
  return 'scope' in key;
}

/** `2024-10-30T23:58:27.427722Z` as `2024-10-30 23:58:27`: the table's time columns (UTC). */
function shortTimestamp(timestamp: string): string {
  return timestamp.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

const FIRST_VERSION_COLUMNS: readonly Column<FirstVersionKey>[] = [
  { header: 'ID', cell: (key) => key.id },
  { header: 'NAME', cell: (key) => key.name, maxWidth: 40 },
  { header: 'STATUS', cell: (key) => key.status },
  { header: 'WORKSPACE', cell: (key) => key.workspace_id ?? DEFAULT_WORKSPACE, maxWidth: 32 },
  { header: 'CREATED (UTC)', cell: (key) => shortTimestamp(key.created_at) },
];

/** A key's scope in a table cell: its workspace, or `(organization)` for a key with no workspace. */
function scopeCell(scope: ScopedKey['scope']): string {
  return scope.type === 'workspace' ? scope.workspace_id : '(organization)';
}

/** A key's permissions, comma separated, or `(none)`: a permission may be named `none`, but has no parentheses. */
export function permissionsText(permissions: readonly string[]): string {
  return permissions.length === 0 ? NONE : permissions.join(', ');
}

/** A key's metadata as compact JSON, or `(none)` for the empty object. */
export function metadataText(metadata: Readonly<Record<string, unknown>>): string {
  return Object.keys(metadata).length === 0 ? NONE : JSON.stringify(metadata);
}

const SCOPED_COLUMNS: readonly Column<ScopedKey>[] = [
  { header: 'ID', cell: (key) => key.id },
  { header: 'NAME', cell: (key) => key.name, maxWidth: 40 },
  { header: 'STATUS', cell: (key) => key.status },
  { header: 'SCOPE', cell: (key) => scopeCell(key.scope), maxWidth: 32 },
  // Cut to fit: `keys get` shows them all.
  { header: 'PERMISSIONS', cell: (key) => permissionsText(key.permissions), maxWidth: 32 },
  { header: 'EXPIRES (UTC)', cell: (key) => (key.expires_at === null ? 'never' : shortTimestamp(key.expires_at)) },
  {
    header: 'LAST USED (UTC)',
    cell: (key) => (key.last_used_at === null ? 'never' : shortTimestamp(key.last_used_at)),
  },
  { header: 'CREATED (UTC)', cell: (key) => shortTimestamp(key.created_at) },
];

/**
 * API keys as a table: ID, NAME, STATUS, WORKSPACE, CREATED (UTC) in the first version's shape; ID, NAME, STATUS,
 * SCOPE, PERMISSIONS, EXPIRES (UTC), LAST USED (UTC), CREATED (UTC) in a later version's.
 */
export function apiKeyTable(keys: readonly AnyApiKey[]): string[] {
  return keys.every(isFirstVersionKey)
    ? renderTable(FIRST_VERSION_COLUMNS, keys)
    : renderTable(SCOPED_COLUMNS, keys.filter(isScopedKey));
}

/** `id (type)` of an actor, or `(none)`. */
function principalText(principal: ScopedKey['principal']): string {
  if (principal === null) {
    return '(none)';
  }
  return principal.type === 'user_actor'
    ? `${principal.user_id} (${principal.type})`
    : `${principal.service_account_id} (${principal.type})`;
}

/** The `field: value` pairs of a key, in the order of the API's fields. */
function fieldsOf(key: AnyApiKey): [string, string][] {
  if (isFirstVersionKey(key)) {
    return [
      ['id', key.id],
      ['name', key.name],
      ['status', key.status],
      ['workspace_id', key.workspace_id ?? DEFAULT_WORKSPACE],
      ['created_at', key.created_at],
      ['created_by', `${key.created_by.id} (${key.created_by.type})`],
      ['partial_key_hint', key.partial_key_hint ?? '(none)'],
    ];
  }
  return [
    ['id', key.id],
    ['name', key.name],
    ['status', key.status],
    ['scope', key.scope.type === 'workspace' ? `${key.scope.workspace_id} (workspace)` : '(organization)'],
    ['principal', principalText(key.principal)],
    ['expires_at', key.expires_at ?? '(never)'],
    ['last_used_at', key.last_used_at ?? '(never)'],
    ['created_at', key.created_at],
    ['created_by', key.created_by === null ? '(unknown)' : `${key.created_by.id} (${key.created_by.type})`],
    ['partial_key_hint', key.partial_key_hint ?? '(none)'],
    ['permissions', permissionsText(key.permissions)],
    ['metadata', metadataText(key.metadata)],
  ];
}

/** `field: value` pairs as aligned lines, made printable. */
function alignedLines(fields: readonly [string, string][]): string[] {
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `${padEnd(`${label}:`, width)} ${printable(value)}`);
}

/** One API key as aligned `field: value` lines, in the order of the API's fields. */
export function apiKeyDetails(key: AnyApiKey): string[] {
  return alignedLines(fieldsOf(key));
}

/** A new key as `field: value` lines with its secret last (`key`), then the warning that it is shown this once. */
export function createdKeyDetails(created: CreatedApiKey): string[] {
  const { key: secret, ...key } = created;
  return [...alignedLines([...fieldsOf(key), ['key', secret]]), '', SECRET_SHOWN_ONCE];
}

/** What became of the key a rotation replaced: expired at once, or working until the end of its grace period. */
function rotatedKeyLine(old: RotatedApiKey['rotated_api_key']): string {
  if (old.status === 'expired' || old.expires_at === null) {
    return `${old.id} is ${old.status}${old.expires_at === null ? '' : ` (expires_at ${old.expires_at})`}`;
  }
  return `${old.id} stays ${old.status} until ${old.expires_at}`;
}

/** A rotation: the new key with its secret, what became of the old key, then the warning about the secret. */
export function rotatedKeyDetails(rotated: RotatedApiKey): string[] {
  const { key: secret, rotated_api_key: old, ...key } = rotated;
  return [
    ...alignedLines([...fieldsOf(key), ['key', secret], ['replaces', rotatedKeyLine(old)]]),
    '',
    SECRET_SHOWN_ONCE,
  ];
}
