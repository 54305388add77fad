import { namesGranting } from '@apikeys/permissions';
import { type Compilable, type RawBuilder, type SqlBool, sql } from 'kysely';
import { pageOf } from '../core/page.js';
import type { StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import type { SlotFunction } from '../prepared-query.js';
import { EFFECTIVE_API_KEY_STATUSES } from '../statuses.js';
import { nowMicros } from '../time.js';
import type { ApiKeyFilters, EffectiveApiKeyStatus, ListApiKeysQuery, ListApiKeysResult } from '../types.js';
import {
  API_KEY_PAGE_SELECTION_WITHOUT_ATTRIBUTES,
  API_KEY_SELECTION,
  type ApiKeyValues,
  type ApiKeyValuesWithoutAttributes,
  apiKeyFromValues,
} from './api-key-rows.js';

/** The values a list query takes. */
type ListSlot =
  | 'organizationId'
  | 'now'
  | 'minusNow'
  | 'workspaceId'
  | 'createdByUserId'
  | 'anchorCreatedAt'
  | 'anchorId'
  | 'limitPlusOne'
  | `grant${number}`;

/**
 * The signed expiry of a key, spelled as in the list indexes of migration 0004 (where the why is), so that
 * PostgreSQL matches it to them: its expiry (never: the largest bigint) if active, minus it if inactive, null if
 * archived. At a moment `now`, inactive keys lie below -now, expired ones from -now to now, active ones above now.
 */
const SIGNED_EXPIRY = sql`case status when 'active' then coalesce(expires_at, 9223372036854775807)
  when 'inactive' then -coalesce(expires_at, 9223372036854775807) end`;

/** The effective statuses of keys that are not archived, in the order of their signed expiry at any moment. */
const SIGNED_EXPIRY_ORDER = ['inactive', 'expired', 'active'] as const;

/**
 * The effective statuses a status filter asks for, in the order of EFFECTIVE_API_KEY_STATUSES; undefined when it
 * selects nothing out (no filter, or every status). An empty list or an unknown status is a programmer error.
 */
function statusesOf(filter: ApiKeyFilters['status']): EffectiveApiKeyStatus[] | undefined {
  if (filter === undefined) {
    return undefined;
  }
  const wanted: readonly unknown[] = typeof filter === 'string' ? [filter] : filter;
  if (wanted.length === 0 || wanted.some((status) => !EFFECTIVE_API_KEY_STATUSES.includes(status as never))) {
    throw new TypeError(`the status filter needs one or more of: ${EFFECTIVE_API_KEY_STATUSES.join(', ')}`);
  }
  const statuses = EFFECTIVE_API_KEY_STATUSES.filter((status) => wanted.includes(status));
  return statuses.length === EFFECTIVE_API_KEY_STATUSES.length ? undefined : statuses;
}

/**
 * The condition that a key's effective status at the slot `now` is one of `statuses` (not all of them). Stored
 * statuses are literals, so that the planners can match the expiring index's predicate. A single status is read
 * from its own index: a stored status by equality, `expired` from the expiring index. Neighbours on the signed
 * expiry line are one range of it. The other sets (inactive with active; archived with others) are an OR, which
 * PostgreSQL checks on each table row.
 */
function statusCondition(
  statuses: readonly EffectiveApiKeyStatus[],
  slot: SlotFunction<ListSlot>,
): RawBuilder<SqlBool> {
  if (statuses.length === 1) {
    switch (statuses[0]) {
      case 'active':
        return sql`status = 'active' and ${SIGNED_EXPIRY} > ${slot('now')}`;
      case 'inactive':
        return sql`status = 'inactive' and ${SIGNED_EXPIRY} < ${slot('minusNow')}`;
      case 'archived':
        return sql`status = 'archived'`;
      case 'expired':
        return sql`expires_at <= ${slot('now')} and status <> 'archived'`;
    }
  }
  const live = liveStatusCondition(
    SIGNED_EXPIRY_ORDER.filter((status) => statuses.includes(status)),
    slot,
  );
  return statuses.includes('archived') ? sql`(status = 'archived' or ${live})` : live;
}

/** The condition that a key is not archived and its effective status at `now` is one of `statuses`. */
function liveStatusCondition(
  statuses: readonly (typeof SIGNED_EXPIRY_ORDER)[number][],
  slot: SlotFunction<ListSlot>,
): RawBuilder<SqlBool> {
  const now = slot('now');
  const minusNow = slot('minusNow');
  switch (statuses.join(' ')) {
    case 'inactive':
      return sql`${SIGNED_EXPIRY} < ${minusNow}`;
    case 'expired':
      return sql`${SIGNED_EXPIRY} >= ${minusNow} and ${SIGNED_EXPIRY} <= ${now}`;
    case 'active':
      return sql`${SIGNED_EXPIRY} > ${now}`;
    case 'inactive expired':
      return sql`${SIGNED_EXPIRY} <= ${now}`;
    case 'expired active':
      return sql`${SIGNED_EXPIRY} >= ${minusNow}`;
    case 'inactive active':
      return sql`(${SIGNED_EXPIRY} < ${minusNow} or ${SIGNED_EXPIRY} > ${now})`;
    case 'inactive expired active':
      return sql`${SIGNED_EXPIRY} is not null`;
    default:
      throw new Error(`no condition for the statuses ${statuses.join(', ')}`);
  }
}

/** A key's selection read from `api_keys` in a query that joins other tables. */
const KEY_SELECTION = API_KEY_SELECTION.map((column) =>
  typeof column === 'string' ? (`api_keys.${column}` as const) : column,
);

/** The union of queries of one shape (`union` removes the rows two of them share). */
function unionOf<Query extends { union(other: Query): Query }>(queries: readonly Query[]): Query {
  const [first, ...others] = queries;
  if (!first) {
    throw new Error('a permission is granted by one name at least: itself');
  }
  return others.reduce((union, query) => union.union(query), first);
}

/** How a page is walked: its cursor, the order of the index read, and the comparison with the cursor's position. */
interface PageWalk {
  cursor: ListApiKeysQuery['cursor'];
  order: 'asc' | 'desc';
  comparison: '<' | '>';
  slot: SlotFunction<ListSlot>;
}

/**
 * A page of the keys that hold a permission, when no other filter applies: for each of the `grants` names that
 * grant it, the positions of the first keys that hold it, read from the permissions index alone; then the first of
 * all those positions (a key that holds two of the names comes once); then only the page's own keys, each by its ID.
 * The join's order is forced, or the planners read every key (SQLite's join order; PostgreSQL's generic plan, which
 * cannot know the limit and hash-joins a scan of the table): SQLite's CROSS JOIN keeps the left table outside,
 * and PostgreSQL does not flatten a lateral subquery with a limit.
 */
function permissionPageByPositions(
  core: StoreCore,
  grants: number,
  { cursor, order, comparison, slot }: PageWalk,
): Compilable {
  const branches = Array.from({ length: grants }, (_, index) => {
    let branch = core.db
      .selectFrom('api_key_permissions')
      .select(['created_at', 'api_key_id'])
      .where('organization_id', '=', slot('organizationId'))
      .where('permission', '=', slot(`grant${index}`));
    if (cursor) {
      branch = branch.where(({ eb, refTuple, tuple }) =>
        eb(refTuple('created_at', 'api_key_id'), comparison, tuple(slot('anchorCreatedAt'), slot('anchorId'))),
      );
    }
    const ordered = branch.orderBy('created_at', order).orderBy('api_key_id', order).limit(slot('limitPlusOne'));
    // SQLite takes an ordered, limited member of a union only as a subquery.
    return core.db.selectFrom(ordered.as(`granted${index}`)).selectAll();
  });
  const positions = core.db
    .selectFrom(unionOf(branches).as('granted'))
    .selectAll()
    .orderBy('created_at', order)
    .orderBy('api_key_id', order)
    .limit(slot('limitPlusOne'))
    .as('page_keys');
  if (isPostgres(core.db)) {
    return core.db
      .selectFrom(positions)
      .crossJoinLateral((eb) =>
        eb
          .selectFrom('api_keys')
          .select(API_KEY_SELECTION)
          .where('api_keys.organization_id', '=', slot('organizationId'))
          .whereRef('api_keys.id', '=', 'page_keys.api_key_id')
          .limit(1)
          .as('page_key'),
      )
      .selectAll('page_key')
      .orderBy('page_keys.created_at', order)
      .orderBy('page_keys.api_key_id', order);
  }
  return core.db
    .selectFrom(positions)
    .crossJoin('api_keys')
    .select(KEY_SELECTION)
    .where('api_keys.organization_id', '=', slot('organizationId'))
    .whereRef('api_keys.id', '=', 'page_keys.api_key_id')
    .orderBy('page_keys.created_at', order)
    .orderBy('page_keys.api_key_id', order);
}

/** One page of the organization's keys, newest first: a keyset read of a list index in page order. */
export async function listApiKeys(
  core: StoreCore,
  { organizationId, limit, cursor, filters, now, attributes = true }: ListApiKeysQuery,
): Promise<ListApiKeysResult> {
  const statuses = statusesOf(filters?.status);
  let anchor: { createdAt: unknown; id: unknown } | undefined;
  if (cursor) {
    const anchorQuery = core.prepared.get<'organizationId' | 'id'>('API key position by id', (slot) =>
      core.db
        .selectFrom('api_keys')
        .select(['created_at', 'id'])
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id')),
    );
    const [position] = await core.run(anchorQuery, { organizationId, id: cursor.id });
    if (!position) {
      return { kind: 'cursor_not_found' };
    }
    anchor = { createdAt: position[0], id: position[1] };
  }

  const workspaceId = filters?.workspaceId;
  const createdByUserId = filters?.createdByUserId;
  const grantedBy = filters?.permission === undefined ? undefined : namesGranting(filters.permission);
  // Walking backwards reads the index in ascending order from the cursor, then reverses the page.
  const backwards = cursor?.direction === 'before';
  // The workspace filter: none, a workspace ID, or null for the organization's default workspace.
  const workspace = workspaceId === undefined ? 'none' : workspaceId === null ? 'default' : 'id';
  const shape =
    `API key page:${statuses?.join('+')}:${workspace}:` +
    `${createdByUserId !== undefined}:${cursor?.direction}:${grantedBy?.length}:${attributes}`;
  const query = core.prepared.get<ListSlot>(shape, (slot) => {
    const order = backwards ? 'asc' : 'desc';
    const comparison = backwards ? '>' : '<';
    /** The conditions of the filters but the permission, on the columns of `api_keys`. */
    const conditions: RawBuilder<SqlBool>[] = [];
    if (statuses !== undefined) {
      conditions.push(statusCondition(statuses, slot));
    }
    if (workspace === 'id') {
      conditions.push(sql<SqlBool>`api_keys.workspace_id = ${slot('workspaceId')}`);
    } else if (workspace === 'default') {
      // A literal scope, so that PostgreSQL matches the predicate of the default workspace's partial index
      // (migration 0004): it cannot read `workspace_id is null` from an index in page order otherwise.
      conditions.push(sql<SqlBool>`api_keys.workspace_id is null and api_keys.scope = 'workspace'`);
    }
    if (createdByUserId !== undefined) {
      conditions.push(
        sql<SqlBool>`api_keys.created_by_type = ${'user'} and api_keys.created_by_id = ${slot('createdByUserId')}`,
      );
    }
    if (grantedBy === undefined) {
      let select = core.db
        .selectFrom('api_keys')
        // Either one: the rows are mapped by their values (`apiKeyFromValues`), not by the builder's row type.
        .select(attributes ? API_KEY_SELECTION : (API_KEY_PAGE_SELECTION_WITHOUT_ATTRIBUTES as never))
        .where('organization_id', '=', slot('organizationId'));
      for (const condition of conditions) {
        select = select.where(condition);
      }
      if (cursor) {
        select = select.where(({ eb, refTuple, tuple }) =>
          eb(refTuple('created_at', 'id'), comparison, tuple(slot('anchorCreatedAt'), slot('anchorId'))),
        );
      }
      return select.orderBy('created_at', order).orderBy('id', order).limit(slot('limitPlusOne'));
    }
    if (conditions.length === 0) {
      return permissionPageByPositions(core, grantedBy.length, { cursor, order, comparison, slot });
    }
    // The permission filter with others: for each name that grants the permission, the first keys that hold it and
    // pass the other filters, read from the permissions index in page order, each key joined by its ID; the page is
    // the first of all those (a key that holds two of the names comes once). Each branch yields whole rows, so that
    // nothing is joined after the union: a join there was planned as a scan of every key (SQLite's join order;
    // PostgreSQL's generic plan, which cannot know the limit).
    const branches = grantedBy.map((_, index) => {
      let branch = core.db
        .selectFrom('api_key_permissions')
        .innerJoin('api_keys', (join) =>
          join
            .onRef('api_keys.organization_id', '=', 'api_key_permissions.organization_id')
            .onRef('api_keys.id', '=', 'api_key_permissions.api_key_id'),
        )
        .select(KEY_SELECTION)
        .where('api_key_permissions.organization_id', '=', slot('organizationId'))
        .where('api_key_permissions.permission', '=', slot(`grant${index}`));
      for (const condition of conditions) {
        branch = branch.where(condition);
      }
      if (cursor) {
        branch = branch.where(({ eb, refTuple, tuple }) =>
          eb(
            refTuple('api_key_permissions.created_at', 'api_key_permissions.api_key_id'),
            comparison,
            tuple(slot('anchorCreatedAt'), slot('anchorId')),
          ),
        );
      }
      const ordered = branch
        .orderBy('api_key_permissions.created_at', order)
        .orderBy('api_key_permissions.api_key_id', order)
        .limit(slot('limitPlusOne'));
      // SQLite takes an ordered, limited member of a union only as a subquery.
      return core.db.selectFrom(ordered.as(`granted${index}`)).selectAll();
    });
    return core.db
      .selectFrom(unionOf(branches).as('page_keys'))
      .selectAll()
      .orderBy('created_at', order)
      .orderBy('id', order)
      .limit(slot('limitPlusOne'));
  });
  const at = now ?? nowMicros();
  const rows = await core.run(query, {
    organizationId,
    now: at,
    minusNow: -at,
    workspaceId,
    createdByUserId,
    anchorCreatedAt: anchor?.createdAt,
    anchorId: anchor?.id,
    limitPlusOne: limit + 1,
    ...Object.fromEntries((grantedBy ?? []).map((name, index) => [`grant${index}`, name])),
  } as Record<ListSlot, unknown>);

  const { page, hasMore } = pageOf(rows, limit, backwards);
  const keys = page.map((row) => apiKeyFromValues(row as ApiKeyValues | ApiKeyValuesWithoutAttributes));
  return { kind: 'page', keys, hasMore };
}
