import type { ApiKeyFilters } from '../src/types.js';

/** Every combination of list filters, with the index (or indexes) a planner should pick for it. */
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
];
/** Where a list page starts. */
export const CURSOR_SHAPES = ['no cursor', 'after', 'before'] as const;
