import { type Compilable, type RawBuilder, type SqlBool, sql } from 'kysely';
import {
  AUDIT_EVENT_ID_PREFIX,
  AUDIT_EVENT_TIME_DIGITS,
  auditEventIdSuffix,
  contextColumns,
  OPERATOR_CHANGES,
} from '../audit-trail/audit-events.js';
import { DATABASE_NOW_MICROS, type PreparedWrite, type StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import { ExpiredApiKeyError } from '../expired-api-key-error.js';
import type { PreparedQuery, SlotFunction } from '../prepared-query.js';
import type { AuditEventsTable } from '../schema.js';
import { nowMicros } from '../time.js';
import type { ApiKeyPatch, ApiKeyRecord, ChangeContext } from '../types.js';
import { WRITE_TIME } from '../write-time.js';
import { API_KEY_COLUMNS, API_KEY_SELECTION, type ApiKeyValues, apiKeyFromValues } from './api-key-rows.js';
import { getApiKey } from './find-api-keys.js';

/**
 * How PostgreSQL's update with its event reads the values the key had: with a row lock it takes first, under the
 * lock its transaction already holds, or without a lock, changing the key only if no other transaction did since.
 */
type OldValuesRead = 'lock first' | 'already locked' | 'if unchanged';

/** The values an update takes. */
type UpdateSlot = 'organizationId' | 'id' | 'name' | 'status' | 'expiresAt' | 'permissions' | 'metadata' | 'updatedAt';

/** The values the event of an update takes besides the update's. */
type UpdateEventSlot =
  | 'eventIdSuffix'
  | 'actorType'
  | 'actorId'
  | 'actorName'
  | 'requestId'
  | 'clientIp'
  | 'clientUserAgent';

/** The fields an update may change, by patch field, with their column. */
const UPDATED_FIELDS = [
  { field: 'name', column: 'name' },
  { field: 'status', column: 'status' },
  { field: 'expiresAt', column: 'expires_at' },
  { field: 'permissions', column: 'permissions' },
  { field: 'metadata', column: 'metadata' },
] as const;

/** The columns the event of an update sets (the others are null). */
const UPDATE_EVENT_COLUMNS = [
  'organization_id',
  'id',
  'occurred_at',
  'type',
  'actor_type',
  'actor_id',
  'actor_name',
  'target_type',
  'target_id',
  'name_before',
  'name_after',
  'status_before',
  'status_after',
  'expires_at_before',
  'expires_at_after',
  'request_id',
  'client_ip',
  'client_user_agent',
  'permissions_before',
  'permissions_after',
  'metadata_before',
  'metadata_after',
] as const satisfies readonly (keyof AuditEventsTable)[];

/** The values of an update's event that come from its context. */
function updateEventValues(context: ChangeContext): Record<Exclude<UpdateEventSlot, 'eventIdSuffix'>, unknown> {
  const columns = contextColumns(context);
  return {
    actorType: columns.actor_type,
    actorId: columns.actor_id,
    actorName: columns.actor_name,
    requestId: columns.request_id,
    clientIp: columns.client_ip,
    clientUserAgent: columns.client_user_agent,
  };
}

/** Whether a patch changes what only a key that has not expired may change: its status (but archival), its expiry. */
function revivesExpiredKeys(patch: ApiKeyPatch): boolean {
  return patch.expiresAt !== undefined || patch.status === 'active' || patch.status === 'inactive';
}

/** The condition that a key (of `table`, if given) has not expired at `now`: archived, or no expiry, or a later one. */
function unexpired(now: unknown, table?: string): RawBuilder<SqlBool> {
  const column = (name: string) => sql.ref(table === undefined ? name : `${table}.${name}`);
  const expiresAt = column('expires_at');
  return sql<SqlBool>`(${column('status')} = 'archived' or ${expiresAt} is null or ${expiresAt} > ${now})`;
}

/** Applies a patch to a key (see `ApiKeyStore.updateApiKey`): the statements below, through the write path. */
export async function updateApiKey(
  core: StoreCore,
  organizationId: string,
  id: string,
  patch: ApiKeyPatch,
  context = OPERATOR_CHANGES,
): Promise<ApiKeyRecord | undefined> {
  if (UPDATED_FIELDS.every(({ field }) => patch[field] === undefined)) {
    throw new TypeError('updateApiKey needs a patch that changes a field');
  }
  const update = preparedApiKeyUpdate(core, organizationId, id, patch, context);
  const batches = core.db.isTransaction ? undefined : core.sameKeyBatches;
  // Keyed by organization too: the first write of a batch locks the row only if it finds it.
  const updated = batches
    ? ((await batches.write(`${organizationId}/${id}`, update)) as ApiKeyRecord | undefined)
    : update.finish(await core.write(update.statements));
  if (updated === undefined && revivesExpiredKeys(patch)) {
    // No row: no such key, or one that had expired when the statement held its lock (an expired key stays so).
    const key = await getApiKey(core, organizationId, id);
    if (key) {
      throw new ExpiredApiKeyError(key);
    }
  }
  return updated;
}

/** The statements of an update (compiled), and what makes its answer of their rows once they have committed. */
function preparedApiKeyUpdate(
  core: StoreCore,
  organizationId: string,
  id: string,
  patch: ApiKeyPatch,
  context: ChangeContext,
): PreparedWrite<ApiKeyRecord | undefined> {
  const { name, status, expiresAt } = patch;
  // Stored as the JSON text they are returned as.
  const permissions = patch.permissions === undefined ? undefined : JSON.stringify(patch.permissions);
  const metadata = patch.metadata === undefined ? undefined : JSON.stringify(patch.metadata);
  const postgres = isPostgres(core.db);
  // Only an expired key's name and archival may change: the statements refuse the other changes (`unexpired`).
  const guarded = revivesExpiredKeys(patch);
  const values = {
    organizationId,
    id,
    name,
    status,
    expiresAt,
    permissions,
    metadata,
    // PostgreSQL's statement reads the database's clock once it holds the row's lock; SQLite's group commit puts
    // the time in when the write runs.
    updatedAt: postgres ? nowMicros() : WRITE_TIME,
    eventIdSuffix: auditEventIdSuffix(),
    ...updateEventValues(context),
  };
  const shape = `${UPDATED_FIELDS.map(({ field }) => patch[field] !== undefined).join(':')}:${guarded}`;
  const changed = UPDATED_FIELDS.filter(({ field }) => patch[field] !== undefined);
  let statements: PreparedQuery<UpdateSlot | UpdateEventSlot>[];
  let statementsUnderLock: PreparedQuery<UpdateSlot | UpdateEventSlot>[] | undefined;
  let optimisticStatements: PreparedQuery<UpdateSlot | UpdateEventSlot>[] | undefined;
  if (postgres) {
    const withEvent = (read: OldValuesRead) =>
      core.prepared.get<UpdateSlot | UpdateEventSlot>(`API key update with event:${shape}:${read}`, (slot) =>
        updateWithEvent(core, changed, guarded, slot, read),
      );
    statements = [withEvent('lock first')];
    statementsUnderLock = [withEvent('already locked')];
    optimisticStatements = [withEvent('if unchanged')];
  } else {
    const update = core.prepared.get<UpdateSlot>(`API key update:${shape}`, (slot) => {
      let statement = core.db
        .updateTable('api_keys')
        .set({
          ...(name !== undefined && { name: slot('name') }),
          ...(status !== undefined && { status: slot('status') }),
          ...(expiresAt !== undefined && { expires_at: slot('expiresAt') }),
          ...(permissions !== undefined && { permissions: slot('permissions') }),
          ...(metadata !== undefined && { metadata: slot('metadata') }),
          updated_at: slot('updatedAt'),
        })
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id'));
      if (guarded) {
        statement = statement.where(unexpired(slot('updatedAt')));
      }
      return statement.returning(API_KEY_SELECTION);
    });
    statements = [
      core.prepared.get(`API key update event:${shape}`, (slot) => eventOfUpdate(core, changed, guarded, slot)),
      update,
    ];
  }
  const compiled = (queries: PreparedQuery<UpdateSlot | UpdateEventSlot>[]) =>
    queries.map((query) => ({ sql: query.sql, parameters: query.parameters(values) }));
  return {
    statements: compiled(statements),
    ...(statementsUnderLock && { statementsUnderLock: compiled(statementsUnderLock) }),
    ...(optimisticStatements && { optimisticStatements: compiled(optimisticStatements) }),
    finish: ([row]) => {
      if (!row) {
        return undefined;
      }
      core.keyChanged({ kind: 'api_key', id, organizationId, change: 'updated' });
      return apiKeyFromValues(row as ApiKeyValues);
    },
  };
}

/**
 * PostgreSQL's update with its event, in one statement: `old` locks the key and reads it as it is now (after any
 * update this one waited for), `updated` changes it, and `event` records both versions when they differ, timed by
 * the database's clock once the lock is held (as `eventTime` does), so that the events of one key are in the order
 * its updates took the lock, whichever replica or connection sent them.
 *
 * `already locked`, for an update that follows another of the same key in its transaction: that one holds the row's
 * lock until the commit, so no other transaction can change the row in between, and taking the lock again would
 * only write it again.
 *
 * `if unchanged` spares the lock (its WAL record and page change; docs/benchmarks.md): `old` reads the key as the
 * statement's snapshot sees it, and the update changes it only if it is still that version of the row (the same
 * `xmin`). When another transaction changed the key in between, PostgreSQL rechecks the condition on the newer
 * version, which fails: no row, and the caller runs the statement again with the lock.
 */
function updateWithEvent(
  core: StoreCore,
  changed: readonly (typeof UPDATED_FIELDS)[number][],
  guarded: boolean,
  slot: SlotFunction<UpdateSlot | UpdateEventSlot>,
  read: OldValuesRead,
): Compilable {
  const assignments = changed.map(({ field, column }) => sql`${sql.ref(column)} = ${slot(field)}`);
  const lock = sql.raw(read === 'lock first' ? ' for update' : '');
  const unchanged = sql.raw(read === 'if unchanged' ? ' and k.xmin = old.version' : '');
  const conditions = guarded ? sql` and ${unexpired(DATABASE_NOW_MICROS, 'old')}` : sql``;
  const statement = sql`with old as (
        select id, xmin as version, name, status, expires_at, permissions, metadata from api_keys
        where organization_id = ${slot('organizationId')} and id = ${slot('id')}${lock}
      ), updated as (
        update api_keys as k set ${sql.join([...assignments, sql`updated_at = ${slot('updatedAt')}`])}
        from old where k.organization_id = ${slot('organizationId')} and k.id = old.id${unchanged}${conditions}
        returning ${sql.join(API_KEY_COLUMNS.map((column) => sql.ref(`k.${column}`)))},
          old.name as name_before, old.status as status_before, old.expires_at as expires_at_before,
          old.permissions as permissions_before, old.metadata as metadata_before
      ), event as (
        insert into audit_events (${sql.join(UPDATE_EVENT_COLUMNS.map((column) => sql.ref(column)))})
        select ${slot('organizationId')},
          ${sql.lit(AUDIT_EVENT_ID_PREFIX)} || lpad(to_hex(clock.now), ${sql.lit(AUDIT_EVENT_TIME_DIGITS)}, '0')
            || ${slot('eventIdSuffix')}, clock.now, 'api_key.updated',
          ${slot('actorType')}, ${slot('actorId')}, ${slot('actorName')}, 'api_key', id,
          name_before, name, status_before, status, expires_at_before, expires_at,
          ${slot('requestId')}, ${slot('clientIp')}, ${slot('clientUserAgent')},
          permissions_before, permissions, metadata_before, metadata
        from updated cross join lateral (select ${DATABASE_NOW_MICROS} as now where updated.id is not null) as clock
        where name_before is distinct from name or status_before is distinct from status
          or expires_at_before is distinct from expires_at or permissions_before is distinct from permissions
          or metadata_before is distinct from metadata
      )
      select ${sql.join(API_KEY_COLUMNS.map((column) => sql.ref(column)))},
        (select u.last_used_at from api_key_usage as u where u.api_key_id = updated.id) as last_used_at
      from updated`;
  return { compile: () => statement.compile(core.db) };
}

/**
 * SQLite's event of an update, run just before it in the same write (SQLite has one writer at a time, so the key
 * cannot change in between): the key as it is, and as the patch leaves it, when they differ.
 */
function eventOfUpdate(
  core: StoreCore,
  changed: readonly (typeof UPDATED_FIELDS)[number][],
  guarded: boolean,
  slot: SlotFunction<UpdateSlot | UpdateEventSlot>,
): Compilable {
  const after = (field: (typeof UPDATED_FIELDS)[number]) =>
    changed.includes(field) ? slot(field.field) : sql.ref(field.column);
  const [name, status, expiresAt, permissions, metadata] = UPDATED_FIELDS;
  const differs = changed.map((field) => sql`${sql.ref(field.column)} is not ${slot(field.field)}`);
  const conditions = guarded ? sql` and ${unexpired(slot('updatedAt'))}` : sql``;
  const statement = sql`insert into audit_events (${sql.join(UPDATE_EVENT_COLUMNS.map((column) => sql.ref(column)))})
      select ${slot('organizationId')},
        ${sql.lit(AUDIT_EVENT_ID_PREFIX)} || printf(${sql.lit(`%0${AUDIT_EVENT_TIME_DIGITS}x`)}, ${slot('updatedAt')})
          || ${slot('eventIdSuffix')}, ${slot('updatedAt')}, 'api_key.updated',
        ${slot('actorType')}, ${slot('actorId')}, ${slot('actorName')}, 'api_key', id,
        name, ${after(name)}, status, ${after(status)}, expires_at, ${after(expiresAt)},
        ${slot('requestId')}, ${slot('clientIp')}, ${slot('clientUserAgent')},
        permissions, ${after(permissions)}, metadata, ${after(metadata)}
      from api_keys
      where organization_id = ${slot('organizationId')} and id = ${slot('id')}
        and (${sql.join(differs, sql` or `)})${conditions}`;
  return { compile: () => statement.compile(core.db) };
}
