import type { ApiKey } from '@apikeys/api-types';
import { type Column, renderTable } from './table.js';
import { padEnd, printable } from './text.js';

/** How a null `workspace_id` (the organization's default workspace) is shown. */
export const DEFAULT_WORKSPACE = '(default)';

/** `2024-10-30T23:58:27.427722Z` as `2024-10-30 23:58:27`: the table's CREATED (UTC) column. */
function shortTimestamp(createdAt: string): string {
  return createdAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

const COLUMNS: readonly Column<ApiKey>[] = [
  { header: 'ID', cell: (key) => key.id },
  { header: 'NAME', cell: (key) => key.name, maxWidth: 40 },
  { header: 'STATUS', cell: (key) => key.status },
  { header: 'WORKSPACE', cell: (key) => key.workspace_id ?? DEFAULT_WORKSPACE, maxWidth: 32 },
  { header: 'CREATED (UTC)', cell: (key) => shortTimestamp(key.created_at) },
];

/** API keys as a table: ID, NAME, STATUS, WORKSPACE, CREATED (UTC). */
export function apiKeyTable(keys: readonly ApiKey[]): string[] {
  return renderTable(COLUMNS, keys);
}

/** One API key as aligned `field: value` lines, in the order of the API's fields. */
export function apiKeyDetails(key: ApiKey): string[] {
  const fields: [string, string][] = [
    ['id', key.id],
    ['name', key.name],
    ['status', key.status],
    ['workspace_id', key.workspace_id ?? DEFAULT_WORKSPACE],
    ['created_at', key.created_at],
    ['created_by', `${key.created_by.id} (${key.created_by.type})`],
    ['partial_key_hint', key.partial_key_hint ?? '(none)'],
  ];
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `${padEnd(`${label}:`, width)} ${printable(value)}`);
}
