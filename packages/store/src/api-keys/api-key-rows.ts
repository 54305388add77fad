import { type Selectable, sql } from 'kysely';
import type { ApiKeysTable } from '../schema.js';
import type { ApiKeyRecord, KeyMetadata } from '../types.js';

/** The columns of a key, in the order of `ApiKeyValues`. */
export const API_KEY_COLUMNS = [
  'id',
  'name',
  'workspace_id',
  'created_at',
  'created_by_id',
  'created_by_type',
  'partial_key_hint',
  'status',
  'expires_at',
  'principal_type',
  'principal_id',
  'scope',
  'permissions',
  'metadata',
] as const;

/**
 * When a key of `api_keys` was last used: its row of `api_key_usage`, found by primary key (a list page reads its
 * covering index, then this for each of its keys).
 */
const LAST_USED_AT = sql<number | string | null>`(select u.last_used_at from api_key_usage as u
  where u.api_key_id = api_keys.id)`.as('last_used_at');

/** What every read of a key selects: its columns, then when it was last used. */
export const API_KEY_SELECTION = [...API_KEY_COLUMNS, LAST_USED_AT] as const;

/**
 * What a list page selects when it shows no permissions and no metadata (the first API version): the columns the
 * covering list indexes hold, so that the page is read from its index alone, and when the key was last used. Its rows
 * are `ApiKeyValuesWithoutAttributes`.
 */
export const API_KEY_PAGE_SELECTION_WITHOUT_ATTRIBUTES = [
  ...API_KEY_COLUMNS.filter((column) => column !== 'permissions' && column !== 'metadata'),
  LAST_USED_AT,
] as const;

/**
 * What a verification reads of a key: its organization, its hash (compared again in constant time), the key; not
 * when it was last used, which a verification never shows.
 */
export const KEY_OF_SECRET_COLUMNS = ['organization_id', 'secret_hash', ...API_KEY_COLUMNS] as const;

type ApiKeyRow = Pick<Selectable<ApiKeysTable>, (typeof API_KEY_COLUMNS)[number]> & {
  last_used_at: number | string | null;
};

/** An API key row as column values, in the order of `API_KEY_COLUMNS`. */
export type ApiKeyValues = [
  id: string,
  name: string,
  workspace_id: string | null,
  created_at: number | string,
  created_by_id: string,
  created_by_type: ApiKeysTable['created_by_type'],
  partial_key_hint: string | null,
  status: ApiKeysTable['status'],
  expires_at: number | string | null,
  principal_type: ApiKeysTable['principal_type'],
  principal_id: string | null,
  scope: ApiKeysTable['scope'],
  permissions: string,
  metadata: string,
  /** Absent when the query did not read it. */
  last_used_at?: number | string | null,
];

/** A row read with `API_KEY_PAGE_SELECTION_WITHOUT_ATTRIBUTES`: `ApiKeyValues` without permissions and metadata. */
export type ApiKeyValuesWithoutAttributes = [
  id: string,
  name: string,
  workspace_id: string | null,
  created_at: number | string,
  created_by_id: string,
  created_by_type: ApiKeysTable['created_by_type'],
  partial_key_hint: string | null,
  status: ApiKeysTable['status'],
  expires_at: number | string | null,
  principal_type: ApiKeysTable['principal_type'],
  principal_id: string | null,
  scope: ApiKeysTable['scope'],
  last_used_at: number | string | null,
];

/** Most keys hold no permissions and no metadata: their stored forms, read without a parse. */
const NO_PERMISSIONS = '[]';
const NO_METADATA = '{}';

const parsePermissions = (stored: string): string[] =>
  stored === NO_PERMISSIONS ? [] : (JSON.parse(stored) as string[]);
const parseMetadata = (stored: string): KeyMetadata =>
  stored === NO_METADATA ? {} : (JSON.parse(stored) as KeyMetadata);

/** Maps column values to a record. Timestamps may arrive as strings from drivers that return bigints so. */
export function apiKeyFromValues(values: ApiKeyValues | ApiKeyValuesWithoutAttributes): ApiKeyRecord {
  const [, , , , , , , , expiresAt, principalType, principalId, scope] = values;
  const key: ApiKeyRecord = {
    id: values[0],
    name: values[1],
    workspaceId: values[2],
    scope,
    createdAt: Number(values[3]),
    createdBy: { id: values[4], type: values[5] },
    partialKeyHint: values[6],
    status: values[7],
    expiresAt: expiresAt === null ? null : Number(expiresAt),
    principal: principalType === null || principalId === null ? null : { type: principalType, id: principalId },
  };
  // Set one by one rather than spread in: a list maps up to a thousand rows a page.
  let lastUsedAt: number | string | null | undefined;
  if (values.length === WITHOUT_ATTRIBUTES_LENGTH) {
    lastUsedAt = (values as ApiKeyValuesWithoutAttributes)[12];
  } else {
    const [, , , , , , , , , , , , permissions, metadata, lastUsed] = values as ApiKeyValues;
    key.permissions = parsePermissions(permissions);
    key.metadata = parseMetadata(metadata);
    lastUsedAt = lastUsed;
  }
  if (lastUsedAt !== undefined) {
    key.lastUsedAt = lastUsedAt === null ? null : Number(lastUsedAt);
  }
  return key;
}

/** The length of `ApiKeyValuesWithoutAttributes`, by which it is told from `ApiKeyValues` (14 or 15 values). */
const WITHOUT_ATTRIBUTES_LENGTH = API_KEY_PAGE_SELECTION_WITHOUT_ATTRIBUTES.length;

/** Maps a row read with `API_KEY_SELECTION` to a record. */
export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return apiKeyFromValues([
    ...API_KEY_COLUMNS.map((column) => row[column]),
    row.last_used_at,
  ] as unknown as ApiKeyValues);
}
