import type { ApiKeyFilters } from '../src/types.js';

/**
 * Every combination of list filters, with the index (or indexes) SQLite should pick for it. The status filters are
 * each stored status, `expired`, and the sets that are one range of the signed expiry (migration 0004), among them
 * the older API's `inactive` (inactive or expired). The workspace filters are a workspace ID and null (the default
 * workspace: `workspace_id is null`, which SQLite reads from the workspace index as an equality, and PostgreSQL from
 * an index of its own). PostgreSQL checks every one of their filters inside the index.
 */
export const FILTER_SHAPES: [string, ApiKeyFilters, RegExp][] = [
  ['no filter', {}, /^api_keys_org_created_covering_idx$/],
  ['status', { status: 'active' }, /^api_keys_org_status_created_covering_idx$/],
  ['workspaceId', { workspaceId: 'wrkspc_seed1' }, /^api_keys_org_workspace_created_covering_idx$/],
  ['createdByUserId', { createdByUserId: 'user_seed1' }, /^api_keys_org_creator_created_covering_idx$/],
  [
    'status + workspaceId',
    { status: 'active', workspaceId: 'wrkspc_seed1' },
    /^api_keys_org_(status|workspace)_created_covering_idx$/,
  ],
  [
    'status + createdByUserId',
    { status: 'active', createdByUserId: 'user_seed1' },
    /^api_keys_org_(status|creator)_created_covering_idx$/,
  ],
  [
    'workspaceId + createdByUserId',
    { workspaceId: 'wrkspc_seed1', createdByUserId: 'user_seed1' },
    /^api_keys_org_(workspace|creator)_created_covering_idx$/,
  ],
  [
    'all three filters',
    { status: 'inactive', workspaceId: 'wrkspc_seed2', createdByUserId: 'user_seed0' },
    /^api_keys_org_(status|workspace|creator)_created_covering_idx$/,
  ],
  ['the default workspace', { workspaceId: null }, /^api_keys_org_workspace_created_covering_idx$/],
  [
    'status + the default workspace',
    { status: 'active', workspaceId: null },
    /^api_keys_org_(status|workspace)_created_covering_idx$/,
  ],
  [
    'the default workspace + createdByUserId',
    { workspaceId: null, createdByUserId: 'user_seed1' },
    /^api_keys_org_(workspace|creator)_created_covering_idx$/,
  ],
  [
    'status + the default workspace + createdByUserId',
    { status: 'inactive', workspaceId: null, createdByUserId: 'user_seed0' },
    /^api_keys_org_(status|workspace|creator)_created_covering_idx$/,
  ],
  ['archived', { status: 'archived' }, /^api_keys_org_status_created_covering_idx$/],
  ['expired', { status: 'expired' }, /^api_keys_org_expiring_created_covering_idx$/],
  ['inactive or expired', { status: ['inactive', 'expired'] }, /^api_keys_org_created_covering_idx$/],
  ['active or expired', { status: ['active', 'expired'] }, /^api_keys_org_created_covering_idx$/],
  [
    'expired + workspaceId',
    { status: 'expired', workspaceId: 'wrkspc_seed1' },
    /^api_keys_org_(expiring|workspace)_created_covering_idx$/,
  ],
  [
    'expired + the default workspace',
    { status: 'expired', workspaceId: null },
    /^api_keys_org_(expiring|workspace)_created_covering_idx$/,
  ],
  [
    'expired + createdByUserId',
    { status: 'expired', createdByUserId: 'user_seed1' },
    /^api_keys_org_(expiring|creator)_created_covering_idx$/,
  ],
  [
    'inactive or expired + workspaceId',
    { status: ['inactive', 'expired'], workspaceId: 'wrkspc_seed1' },
    /^api_keys_org_(workspace_)?created_covering_idx$/,
  ],
  [
    'inactive or expired + the default workspace',
    { status: ['inactive', 'expired'], workspaceId: null },
    /^api_keys_org_(workspace_)?created_covering_idx$/,
  ],
  [
    'inactive or expired + createdByUserId',
    { status: ['inactive', 'expired'], createdByUserId: 'user_seed1' },
    /^api_keys_org_(creator_)?created_covering_idx$/,
  ],
];

/**
 * Status sets that are no range of the signed expiry: SQLite reads them like the others, PostgreSQL reads them in
 * page order from an index too but checks the status on the table row of each entry (a Filter).
 */
export const ROW_CHECKED_STATUS_SHAPES: [string, ApiKeyFilters, RegExp][] = [
  ['active or inactive', { status: ['active', 'inactive'] }, /^api_keys_org_created_covering_idx$/],
  ['archived or expired', { status: ['archived', 'expired'] }, /^api_keys_org_created_covering_idx$/],
  [
    'archived or active + workspaceId',
    { status: ['archived', 'active'], workspaceId: 'wrkspc_seed1' },
    /^api_keys_org_(workspace_)?created_covering_idx$/,
  ],
];

/** Where a list page starts. */
export const CURSOR_SHAPES = ['no cursor', 'after', 'before'] as const;
