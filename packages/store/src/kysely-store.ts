import {
  type Compilable,
  CompiledQuery,
  type InsertObject,
  type Kysely,
  Migrator,
  type RawBuilder,
  type Selectable,
  type SqlBool,
  sql,
} from 'kysely';
import {
  AUDIT_EVENT_ID_PREFIX,
  AUDIT_EVENT_TIME_DIGITS,
  auditEventIdSuffix,
  contextColumns,
  type EventFacts,
  eventRow,
  idAfter,
  idBefore,
  NOTHING,
  OPERATOR_CHANGES,
  type RecordedFields,
  seedAuditEventRows,
  toAuditEvent,
} from './audit-events.js';
import { isPostgres } from './dialect.js';
import { ExpiredApiKeyError } from './expired-api-key-error.js';
import { KeyChangeHub } from './key-changes.js';
import { migrationProvider } from './migrations/index.js';
import { type PreparedQuery, PreparedQueryCache, type SlotFunction } from './prepared-query.js';
import { newId } from './random.js';
import { SameKeyBatches } from './same-key-batches.js';
import {
  type AdminKeysTable,
  type ApiKeysTable,
  AUDIT_EVENTS_TABLE_COLUMNS,
  type AuditEventsTable,
  type BulkTable,
  type BulkTables,
  type DatabaseSchema,
  type VerifierKeysTable,
} from './schema.js';
import { hashesEqual, issueSecret, type SecretKind } from './secrets.js';
import { seedRows } from './seed.js';
import { EFFECTIVE_API_KEY_STATUSES, effectiveStatus } from './statuses.js';
import { nowMicros } from './time.js';
import type {
  AdminKeyRecord,
  AdminKeyStatus,
  ApiKeyFilters,
  ApiKeyPatch,
  ApiKeyRecord,
  AuditEventRecord,
  ChangeContext,
  ConnectionPoolStats,
  CreatedAdminKey,
  CreatedApiKey,
  CreatedVerifierKey,
  Credential,
  EffectiveApiKeyStatus,
  EpochMicros,
  KeyChange,
  KeyChangeListener,
  KeyOfSecret,
  KeyUse,
  ListApiKeysQuery,
  ListApiKeysResult,
  ListAuditEventsQuery,
  ListAuditEventsResult,
  NewApiKey,
  OrganizationRecord,
  RotateApiKeyInput,
  RotateApiKeyResult,
  SchemaMigrator,
  SeedAuditEventsOptions,
  SeedOptions,
  Store,
  VerifierKeyRecord,
  VerifierKeyStatus,
} from './types.js';
import { atWriteTime, WRITE_TIME } from './write-time.js';

/** The few things that differ between database engines; everything else is one Kysely implementation. */
export interface DialectAdapter {
  /**
   * Inserts many rows into a table, as fast as the engine allows, committing every so many rows (chunks are small:
   * an adapter groups them into larger transactions). Called outside any Kysely transaction. Returns the number of
   * rows inserted.
   */
  insertRows<Table extends BulkTable>(table: Table, chunks: Iterable<BulkTables[Table][]>): Promise<number>;
  /**
   * Runs one statement on its own (autocommit), outside any transaction of the caller, and returns its rows as
   * arrays of column values in the order of the select or returning list (no row objects: they cost more than the
   * read itself on large pages). It must report the statement to the store's `onQuery` listener.
   */
  queryRows(sql: string, parameters: unknown[]): Promise<unknown[][]>;
  /**
   * Runs one write: statements that commit together or not at all, the last of which returns rows (`returning`),
   * like `queryRows`, except that the engine may commit it together with other writes issued at about the same
   * time (group commit). It resolves only once the write is durable, and a write that fails fails alone. PostgreSQL
   * takes one statement (a data-modifying WITH makes several changes in one); SQLite takes several.
   */
  writeRows(statements: CompiledWrite): Promise<unknown[][]>;
  /** How busy the engine's connection pools are; absent for an engine without pools. */
  poolStats?(): ConnectionPoolStats[];
  /**
   * Tells the other processes on this database that a key changed, once the change has committed. Best effort: a
   * process that misses it serves what it read until its cache's time to live runs out.
   */
  announceKeyChange(change: KeyChange): Promise<void>;
  /** Listens for the other processes' changes (see `Store.watchKeyChanges`); resolves with the function that stops. */
  watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>>;
  /** Releases the engine's connections. */
  close(): Promise<void>;
  /**
   * Runs writes (each as `writeRows` takes it) in one transaction, in order, and resolves with the rows of each once
   * it has committed; if one fails, none is made. Its deadline runs from `since` (`performance.now()` when the
   * first of them came). Given (PostgreSQL), concurrent updates of one key are committed
   * together (`SameKeyBatches`).
   */
  writeRowsTogether?(writes: readonly CompiledWrite[], since: number): Promise<unknown[][][]>;
  /** Whether an error is one a statement raised, which rolled its transaction back and left the connection usable. */
  isStatementError?(error: unknown): boolean;
}

/** The statements of one write, compiled: they commit together or not at all. */
export type CompiledWrite = readonly { sql: string; parameters: unknown[] }[];

/** A write ready to run, and what makes its answer of the rows it returned once it has committed. */
interface PreparedWrite<T> {
  statements: CompiledWrite;
  /**
   * Its statements when it follows another write of the same row in one transaction (`SameKeyBatches`), which holds
   * the row's lock until it commits: they need not take it again. `statements` when not given.
   */
  statementsUnderLock?: CompiledWrite;
  /**
   * Its statements to try first when it runs alone, cheaper than `statements`: they change nothing and return no
   * rows when another transaction changed the row after they read it. Then `statements` run.
   */
  optimisticStatements?: CompiledWrite;
  finish(rows: unknown[][]): T;
}

/**
 * How PostgreSQL's update with its event reads the values the key had: with a row lock it takes first, under the
 * lock its transaction already holds, or without a lock, changing the key only if no other transaction did since.
 */
type OldValuesRead = 'lock first' | 'already locked' | 'if unchanged';

const API_KEY_COLUMNS = [
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
] as const;

const ADMIN_KEY_COLUMNS = ['id', 'organization_id', 'name', 'partial_key_hint', 'status', 'secret_hash'] as const;

/**
 * When a key of `api_keys` was last used: its row of `api_key_usage`, found by primary key (a list page reads its
 * covering index, then this for each of its keys).
 */
const LAST_USED_AT = sql<number | string | null>`(select u.last_used_at from api_key_usage as u
  where u.api_key_id = api_keys.id)`.as('last_used_at');

/** What every read of a key selects: its columns, then when it was last used. */
const API_KEY_SELECTION = [...API_KEY_COLUMNS, LAST_USED_AT] as const;

/** The columns credential lookups read, the same in `admin_keys` and `verifier_keys`. */
const CREDENTIAL_KEY_COLUMNS = ADMIN_KEY_COLUMNS;

/**
 * What a verification reads of a key: its organization, its hash (compared again in constant time), the key; not
 * when it was last used, which a verification never shows.
 */
const KEY_OF_SECRET_COLUMNS = ['organization_id', 'secret_hash', ...API_KEY_COLUMNS] as const;

const ORGANIZATION_COLUMNS = ['id', 'name', 'default_workspace_id as defaultWorkspaceId'] as const;

/** An admin key or verifier key row as column values, in the order of `CREDENTIAL_KEY_COLUMNS`. */
type CredentialKeyValues = [
  id: string,
  organization_id: string,
  name: string,
  partial_key_hint: string,
  status: AdminKeysTable['status'] & VerifierKeysTable['status'],
  secret_hash: string,
];

/** The values a list query takes. */
type ListSlot =
  | 'organizationId'
  | 'now'
  | 'minusNow'
  | 'workspaceId'
  | 'createdByUserId'
  | 'anchorCreatedAt'
  | 'anchorId'
  | 'limitPlusOne';

/** The values an update takes. */
type UpdateSlot = 'organizationId' | 'id' | 'name' | 'status' | 'expiresAt' | 'updatedAt';

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
] as const;

/** PostgreSQL's clock, read when evaluated (not at the start of the transaction), in microseconds since the epoch. */
const DATABASE_NOW_MICROS = sql<number>`cast(extract(epoch from clock_timestamp()) * 1000000 as bigint)`;

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

/** The values a page of the audit trail takes. */
type AuditPageSlot = 'organizationId' | 'targetId' | 'actorId' | 'idAbove' | 'idBelow' | 'cursorId' | 'limitPlusOne';

type ApiKeyRow = Pick<Selectable<ApiKeysTable>, (typeof API_KEY_COLUMNS)[number]> & {
  last_used_at: number | string | null;
};

// Rows generated per chunk: small, so that each chunk is garbage before the next young-generation collection
// (docs/benchmarks.md, "Seeding"). Adapters group chunks into larger writes.
const SEED_CHUNK_SIZE = 2_000;

/** An API key row as column values, in the order of `API_KEY_COLUMNS`. */
type ApiKeyValues = [
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
  /** Absent when the query did not read it. */
  last_used_at?: number | string | null,
];

/** Maps column values to a record. Timestamps may arrive as strings from drivers that return bigints so. */
function apiKeyFromValues(values: ApiKeyValues): ApiKeyRecord {
  const [, , , , , , , , expiresAt, principalType, principalId, scope, lastUsedAt] = values;
  return {
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
    ...(lastUsedAt !== undefined && { lastUsedAt: lastUsedAt === null ? null : Number(lastUsedAt) }),
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return apiKeyFromValues([
    ...API_KEY_COLUMNS.map((column) => row[column]),
    row.last_used_at,
  ] as unknown as ApiKeyValues);
}

function toVerifierKey(
  row: Pick<VerifierKeysTable, 'id' | 'organization_id' | 'name' | 'partial_key_hint' | 'status'>,
): VerifierKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    partialKeyHint: row.partial_key_hint,
    status: row.status,
  };
}

/**
 * A page from the rows of a query that asked for `limit + 1` in page order (ascending when walking `backwards`):
 * at most `limit` rows, newest first, and whether more lay beyond.
 */
function pageOf(rows: unknown[][], limit: number, backwards: boolean): { page: unknown[][]; hasMore: boolean } {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  if (backwards) {
    page.reverse();
  }
  return { page, hasMore };
}

/** The fields of a key that audit events record. */
function recordedFields(key: ApiKeyRecord | AdminKeyRecord): RecordedFields {
  return { name: key.name, status: key.status, expiresAt: 'expiresAt' in key ? (key.expiresAt ?? null) : null };
}

/** Maps an event's column values, in the order of `AUDIT_EVENTS_TABLE_COLUMNS`, to a record. */
function auditEventFromValues(values: unknown[]): AuditEventRecord {
  return toAuditEvent(Object.fromEntries(AUDIT_EVENTS_TABLE_COLUMNS.map((column, i) => [column, values[i]])) as never);
}

function toAdminKey(
  row: Pick<AdminKeysTable, 'id' | 'organization_id' | 'name' | 'partial_key_hint' | 'status'>,
): AdminKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    partialKeyHint: row.partial_key_hint,
    status: row.status,
  };
}

/**
 * The signed expiry of a key, spelled as in the list indexes of migration 0004 (where the why is), so that
 * PostgreSQL matches it to them: its expiry (never: the largest bigint) if active, minus it if inactive, null if
 * archived. At a moment `now`, inactive keys lie below -now, expired ones from -now to now, active ones above now.
 */
const SIGNED_EXPIRY = sql`case status when 'active' then coalesce(expires_at, 9223372036854775807)
  when 'inactive' then -coalesce(expires_at, 9223372036854775807) end`;

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

/** Runs the migrations of `migrations/` on a Kysely instance. */
export class KyselyMigrator implements SchemaMigrator {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async migrateToLatest(): Promise<string[]> {
    const { error, results } = await new Migrator({ db: this.db, provider: migrationProvider }).migrateToLatest();
    if (error) {
      throw new Error('database migration failed', { cause: error });
    }
    return (results ?? []).map((result) => result.migrationName);
  }
}

/** The store on any Kysely dialect. */
export class KyselyStore implements Store {
  /**
   * `recordsChanges: false` writes no audit events: only to measure what the audit trail costs (`pnpm bench`
   * compares updates with and without it).
   */
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly adapter: DialectAdapter,
    private readonly prepared = new PreparedQueryCache(),
    private readonly recordsChanges = true,
    private readonly keyChanges = new KeyChangeHub(),
    /** In a transaction's store: the changes to keys made in it, announced once it has committed. */
    private readonly uncommittedKeyChanges: KeyChange[] = [],
  ) {}

  #sameKeyBatches: SameKeyBatches<PreparedWrite<unknown>> | undefined;

  /**
   * The updates of a key that wait for the one in flight, committed together after it, on an engine that can run
   * writes together (PostgreSQL; SQLite commits the writes of a turn together anyway).
   */
  private get sameKeyBatches(): SameKeyBatches<PreparedWrite<unknown>> | undefined {
    const { writeRowsTogether, isStatementError } = this.adapter;
    if (!writeRowsTogether || !isStatementError) {
      return undefined;
    }
    this.#sameKeyBatches ??= new SameKeyBatches<PreparedWrite<unknown>>({
      isStatementError,
      alone: async (write) => {
        if (write.optimisticStatements) {
          const rows = await this.adapter.writeRows(write.optimisticStatements);
          if (rows.length > 0) {
            return write.finish(rows);
          }
        }
        return write.finish(await this.adapter.writeRows(write.statements));
      },
      together: async (writes, since) => {
        const rows = await writeRowsTogether(
          writes.map((write, index) =>
            index === 0 ? write.statements : (write.statementsUnderLock ?? write.statements),
          ),
          since,
        );
        return writes.map((write, index) => write.finish(rows[index] ?? []));
      },
    });
    return this.#sameKeyBatches;
  }

  /** A store of the transaction `trx`, sharing everything else with this one. */
  private inside(trx: Kysely<DatabaseSchema>): KyselyStore {
    return new KyselyStore(trx, this.adapter, this.prepared, this.recordsChanges, this.keyChanges);
  }

  /** Announces a change to a key: now, or once the transaction it was made in has committed. */
  private keyChanged(change: KeyChange): void {
    if (this.db.isTransaction) {
      this.uncommittedKeyChanges.push(change);
      return;
    }
    this.announce([change]);
  }

  private announce(changes: readonly KeyChange[]): void {
    for (const change of changes) {
      this.keyChanges.publish({ type: 'changed', change });
      this.adapter.announceKeyChange(change).catch(() => {});
    }
  }

  async watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>> {
    const unsubscribe = this.keyChanges.subscribe(listener);
    const stop = await this.adapter.watchKeyChanges(listener).catch((error: unknown) => {
      unsubscribe();
      throw error;
    });
    return async () => {
      unsubscribe();
      await stop();
    };
  }

  /** Runs `work` on this store in a transaction (the one already open, if any). */
  private async inTransaction<T>(work: (store: KyselyStore) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) {
      return work(this);
    }
    let inside: KyselyStore | undefined;
    const result = await this.db.transaction().execute((trx) => {
      inside = this.inside(trx);
      return work(inside);
    });
    this.announce(inside?.uncommittedKeyChanges ?? []);
    return result;
  }

  /**
   * Records an event; called inside the transaction of its change, after the change (and any lock it took), so that
   * the events of one key are in the order its changes were made.
   */
  private async recordEvent(facts: EventFacts, context: ChangeContext): Promise<void> {
    if (this.recordsChanges) {
      const occurredAt = facts.occurredAt ?? (await this.currentTime());
      await this.db
        .insertInto('audit_events')
        .values(eventRow({ ...facts, occurredAt }, context))
        .execute();
    }
  }

  /**
   * Now, by the clock that times changes and decides expiry when a key changes. On PostgreSQL, the database's clock:
   * every replica's changes of one key are then timed by one clock, in the order they took the key's lock (an update
   * reads it in its statement, the same way).
   */
  private async currentTime(): Promise<EpochMicros> {
    if (!isPostgres(this.db)) {
      return nowMicros();
    }
    const { rows } = await sql<{ now: number | string }>`select ${DATABASE_NOW_MICROS} as now`.execute(this.db);
    return Number(rows[0]?.now);
  }

  /**
   * Runs a prepared query and returns its rows as column values. Inside `transaction()` it goes through the
   * transaction's connection, so that it sees, and belongs to, the transaction.
   */
  private async run<Name extends string>(
    query: PreparedQuery<Name>,
    values: Readonly<Record<Name, unknown>>,
  ): Promise<unknown[][]> {
    const parameters = query.parameters(values);
    if (this.db.isTransaction) {
      const { rows } = await this.db.executeQuery(CompiledQuery.raw(query.sql, parameters));
      return rows.map((row) => Object.values(row as object));
    }
    return this.adapter.queryRows(query.sql, parameters);
  }

  async transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    return this.inTransaction(work);
  }

  async createOrganization(name: string, context = OPERATOR_CHANGES): Promise<OrganizationRecord> {
    const organization = { id: newId('org'), name, defaultWorkspaceId: newId('wrkspc') };
    const createdAt = nowMicros();
    return this.inTransaction(async (store) => {
      await store.db
        .insertInto('organizations')
        .values({
          id: organization.id,
          name,
          default_workspace_id: organization.defaultWorkspaceId,
          created_at: createdAt,
        })
        .execute();
      await store.recordEvent(
        {
          organizationId: organization.id,
          type: 'organization.created',
          target: { type: 'organization', id: organization.id },
          before: NOTHING,
          after: { ...NOTHING, name },
        },
        context,
      );
      return organization;
    });
  }

  async listOrganizations(): Promise<OrganizationRecord[]> {
    return this.db
      .selectFrom('organizations')
      .select(ORGANIZATION_COLUMNS)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async getOrganization(id: string): Promise<OrganizationRecord | undefined> {
    return this.db.selectFrom('organizations').select(ORGANIZATION_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async createAdminKey(
    input: { organizationId: string; name: string },
    context = OPERATOR_CHANGES,
  ): Promise<CreatedAdminKey> {
    const issued = issueSecret('admin');
    const row = {
      id: newId('adminkey'),
      organization_id: input.organizationId,
      name: input.name,
      secret_hash: issued.hash,
      partial_key_hint: issued.hint,
      status: 'active' as const,
      created_at: nowMicros(),
    };
    const adminKey = toAdminKey(row);
    return this.inTransaction(async (store) => {
      await store.db.insertInto('admin_keys').values(row).execute();
      await store.recordEvent(
        {
          organizationId: input.organizationId,
          type: 'admin_key.created',
          target: { type: 'admin_key', id: row.id },
          before: NOTHING,
          after: recordedFields(adminKey),
        },
        context,
      );
      return { adminKey, secret: issued.secret };
    });
  }

  async setAdminKeyStatus(
    id: string,
    status: AdminKeyStatus,
    context = OPERATOR_CHANGES,
  ): Promise<AdminKeyRecord | undefined> {
    return this.inTransaction(async (store) => {
      let read = store.db.selectFrom('admin_keys').select(ADMIN_KEY_COLUMNS).where('id', '=', id);
      if (isPostgres(store.db)) {
        read = read.forUpdate();
      }
      const found = await read.executeTakeFirst();
      if (!found || found.status === status) {
        return found && toAdminKey(found);
      }
      const row = await store.db
        .updateTable('admin_keys')
        .set({ status })
        .where('id', '=', id)
        .returning(ADMIN_KEY_COLUMNS)
        .executeTakeFirstOrThrow();
      const adminKey = toAdminKey(row);
      store.keyChanged({ kind: 'admin_key', id });
      await store.recordEvent(
        {
          organizationId: adminKey.organizationId,
          type: status === 'disabled' ? 'admin_key.disabled' : 'admin_key.enabled',
          target: { type: 'admin_key', id },
          before: recordedFields(toAdminKey(found)),
          after: recordedFields(adminKey),
        },
        context,
      );
      return adminKey;
    });
  }

  async findCredential(secretHash: string, kind?: SecretKind): Promise<Credential> {
    const lookups: Record<SecretKind, () => Promise<Credential | undefined>> = {
      admin: async () => {
        const adminKey = await this.credentialKeyByHash('admin_keys', secretHash);
        return adminKey && { kind: 'admin_key', adminKey };
      },
      verifier: async () => {
        const verifierKey = await this.credentialKeyByHash('verifier_keys', secretHash);
        return verifierKey && { kind: 'verifier_key', verifierKey };
      },
      apiKey: async () => {
        const [row] = await this.run(this.byHash('api_keys', ['organization_id', 'secret_hash'] as const), {
          hash: secretHash,
        });
        if (!row) {
          return undefined;
        }
        const [organizationId, storedHash] = row as [string, string];
        return hashesEqual(storedHash, secretHash) ? { kind: 'api_key', organizationId } : undefined;
      },
    };
    for (const lookup of kind ? [lookups[kind]] : Object.values(lookups)) {
      const credential = await lookup();
      if (credential) {
        return credential;
      }
    }
    return { kind: 'unknown' };
  }

  /** The admin key or verifier key (the tables have the same columns) whose secret has this hash. */
  private async credentialKeyByHash<Table extends 'admin_keys' | 'verifier_keys'>(
    table: Table,
    secretHash: string,
  ): Promise<(Table extends 'admin_keys' ? AdminKeyRecord : VerifierKeyRecord) | undefined> {
    const [row] = await this.run(this.byHash(table, CREDENTIAL_KEY_COLUMNS), { hash: secretHash });
    if (!row) {
      return undefined;
    }
    const [id, organizationId, name, partialKeyHint, status, storedHash] = row as CredentialKeyValues;
    return hashesEqual(storedHash, secretHash)
      ? ({ id, organizationId, name, partialKeyHint, status } as Table extends 'admin_keys'
          ? AdminKeyRecord
          : VerifierKeyRecord)
      : undefined;
  }

  /** The prepared lookup of a key table's row by its secret's hash. */
  private byHash<Table extends 'admin_keys' | 'verifier_keys' | 'api_keys'>(
    table: Table,
    columns: readonly (string | typeof LAST_USED_AT)[],
  ): PreparedQuery<'hash'> {
    const shape = columns.map((column) => (typeof column === 'string' ? column : 'last_used_at')).join();
    return this.prepared.get<'hash'>(`${table} by hash:${shape}`, (slot) =>
      this.db
        .selectFrom(table as 'admin_keys')
        .select(columns as unknown as (typeof ADMIN_KEY_COLUMNS)[number][])
        .where('secret_hash', '=', slot('hash')),
    );
  }

  async findApiKeyBySecretHash(secretHash: string): Promise<KeyOfSecret | undefined> {
    const [row] = await this.run(this.byHash('api_keys', KEY_OF_SECRET_COLUMNS), { hash: secretHash });
    if (!row) {
      return undefined;
    }
    const [organizationId, storedHash, ...values] = row as [string, string, ...ApiKeyValues];
    return hashesEqual(storedHash, secretHash) ? { organizationId, apiKey: apiKeyFromValues(values) } : undefined;
  }

  async recordKeyUsage(uses: readonly KeyUse[]): Promise<void> {
    if (uses.length === 0) {
      return;
    }
    // One statement whatever the number of keys: arrays on PostgreSQL, a JSON object on SQLite.
    const statement = isPostgres(this.db)
      ? {
          sql: `insert into api_key_usage (api_key_id, last_used_at)
            select * from unnest($1::text[], $2::bigint[])
            on conflict (api_key_id) do update
            set last_used_at = greatest(api_key_usage.last_used_at, excluded.last_used_at)`,
          parameters: [uses.map((use) => use.id), uses.map((use) => use.lastUsedAt)],
        }
      : {
          sql: `insert into api_key_usage (api_key_id, last_used_at)
            select key, value from json_each(?) where true
            on conflict (api_key_id) do update set last_used_at = max(last_used_at, excluded.last_used_at)`,
          parameters: [JSON.stringify(Object.fromEntries(uses.map((use) => [use.id, use.lastUsedAt])))],
        };
    await this.adapter.writeRows([statement]);
  }

  async createVerifierKey(input: { organizationId: string; name: string }): Promise<CreatedVerifierKey> {
    const issued = issueSecret('verifier');
    const row = {
      id: newId('verifierkey'),
      organization_id: input.organizationId,
      name: input.name,
      secret_hash: issued.hash,
      partial_key_hint: issued.hint,
      status: 'active' as const,
      created_at: nowMicros(),
    };
    await this.db.insertInto('verifier_keys').values(row).execute();
    return { verifierKey: toVerifierKey(row), secret: issued.secret };
  }

  async setVerifierKeyStatus(id: string, status: VerifierKeyStatus): Promise<VerifierKeyRecord | undefined> {
    const row = await this.db
      .updateTable('verifier_keys')
      .set({ status })
      .where('id', '=', id)
      .returning(['id', 'organization_id', 'name', 'partial_key_hint', 'status'])
      .executeTakeFirst();
    if (!row) {
      return undefined;
    }
    this.keyChanged({ kind: 'verifier_key', id });
    return toVerifierKey(row);
  }

  async createApiKey(input: NewApiKey, context = OPERATOR_CHANGES): Promise<CreatedApiKey> {
    const { organizationId, scope = 'workspace', workspaceId, principal } = input;
    if (scope === 'organization') {
      if (!principal || workspaceId != null) {
        throw new TypeError('a key with organization scope needs a principal and takes no workspace');
      }
    } else if (scope !== 'workspace') {
      throw new TypeError(`unknown scope: ${String(scope)}`);
    }
    const values = {
      organization_id: organizationId,
      name: input.name,
      // Null: the default workspace with `workspace` scope, no workspace with `organization` scope.
      workspace_id: workspaceId ?? null,
      scope,
      created_by_id: input.createdBy.id,
      created_by_type: input.createdBy.type,
      status: input.status ?? 'active',
      expires_at: input.expiresAt ?? null,
      principal_type: principal?.type ?? null,
      principal_id: principal?.id ?? null,
    };
    return this.inTransaction(async (store) => {
      const created = await store.insertApiKey(values);
      await store.recordCreation(organizationId, created.apiKey, context);
      return created;
    });
  }

  /** Records the creation of a key; `replaces` is the key a rotation replaces with it. */
  private async recordCreation(
    organizationId: string,
    key: ApiKeyRecord,
    context: ChangeContext,
    replaces?: ApiKeyRecord,
  ): Promise<void> {
    await this.recordEvent(
      {
        organizationId,
        type: 'api_key.created',
        target: { type: 'api_key', id: key.id },
        before: NOTHING,
        after: recordedFields(key),
        related: replaces && { type: 'api_key', id: replaces.id },
      },
      context,
    );
  }

  /** Inserts a key with a new ID and secret, created now. */
  private async insertApiKey(
    values: Omit<
      InsertObject<DatabaseSchema, 'api_keys'>,
      'id' | 'created_at' | 'partial_key_hint' | 'secret_hash' | 'updated_at'
    >,
  ): Promise<CreatedApiKey> {
    const issued = issueSecret('apiKey');
    const now = nowMicros();
    const row = await this.db
      .insertInto('api_keys')
      .values({
        ...values,
        id: newId('apikey'),
        created_at: now,
        partial_key_hint: issued.hint,
        secret_hash: issued.hash,
        updated_at: now,
      })
      .returning(API_KEY_SELECTION)
      .executeTakeFirstOrThrow();
    return { apiKey: toApiKey(row), secret: issued.secret };
  }

  async rotateApiKey(input: RotateApiKeyInput, context = OPERATOR_CHANGES): Promise<RotateApiKeyResult> {
    const { organizationId, id, gracePeriodMicros } = input;
    if (!Number.isSafeInteger(gracePeriodMicros) || gracePeriodMicros < 0) {
      throw new TypeError('the grace period must be a whole number of microseconds, zero or more');
    }
    if (!this.db.isTransaction) {
      return this.inTransaction((store) => store.rotateApiKey(input, context));
    }
    let read = this.db
      .selectFrom('api_keys')
      .select(API_KEY_SELECTION)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id);
    if (isPostgres(this.db)) {
      // A second rotation of the key waits here for the first to commit, then sees the expiry it set. (SQLite runs
      // one transaction at a time per connection, and one whose snapshot another connection has written to since
      // fails to write.)
      read = read.forUpdate();
    }
    const row = await read.executeTakeFirst();
    if (!row) {
      return { kind: 'not_found' };
    }
    const key = toApiKey(row);
    const expiresAt = key.expiresAt ?? null;
    // Read under the lock, so that a rotation or update that waited for another one is later than it.
    const now = await this.currentTime();
    const status = effectiveStatus(key, now);
    if (status === 'archived' || status === 'expired') {
      return { kind: 'not_rotatable', key, status };
    }
    const created = await this.insertApiKey({
      organization_id: organizationId,
      name: key.name,
      workspace_id: key.workspaceId,
      scope: key.scope ?? 'workspace',
      created_by_id: input.createdBy.id,
      created_by_type: input.createdBy.type,
      status: 'active',
      expires_at: expiresAt,
      principal_type: key.principal?.type ?? null,
      principal_id: key.principal?.id ?? null,
    });
    const graceEnd = now + gracePeriodMicros;
    const previous = await this.db
      .updateTable('api_keys')
      .set({
        expires_at: expiresAt === null ? graceEnd : Math.min(expiresAt, graceEnd),
        updated_at: nowMicros(),
      })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returning(API_KEY_SELECTION)
      .executeTakeFirstOrThrow()
      .then(toApiKey);
    await this.recordCreation(organizationId, created.apiKey, context, key);
    await this.recordEvent(
      {
        organizationId,
        type: 'api_key.rotated',
        target: { type: 'api_key', id },
        before: recordedFields(key),
        after: recordedFields(previous),
        related: { type: 'api_key', id: created.apiKey.id },
      },
      context,
    );
    this.keyChanged({ kind: 'api_key', id });
    return { kind: 'rotated', created, previous, rotatedAt: now };
  }

  /** Runs a bulk insert, which writes through the engine's own connection, outside any transaction of this store. */
  private async bulkInsert<Table extends BulkTable>(
    table: Table,
    chunks: Iterable<BulkTables[Table][]>,
  ): Promise<number> {
    if (this.db.isTransaction) {
      throw new Error('seeding cannot run inside transaction()');
    }
    return this.adapter.insertRows(table, chunks);
  }

  /**
   * The keys commit in chunks, and their one event after the last: a seed that fails half-way leaves the keys of
   * the chunks it committed without an event (seeding is for load tests; docs/operations.md).
   */
  async seedApiKeys(options: SeedOptions, context = OPERATOR_CHANGES): Promise<number> {
    const count = await this.bulkInsert('api_keys', seedRows(options, SEED_CHUNK_SIZE));
    await this.recordEvent(
      {
        organizationId: options.organizationId,
        type: 'api_key.seeded',
        target: { type: 'organization', id: options.organizationId },
        before: NOTHING,
        after: NOTHING,
        keyCount: count,
      },
      context,
    );
    return count;
  }

  async seedAuditEvents(options: SeedAuditEventsOptions): Promise<number> {
    return this.bulkInsert('audit_events', seedAuditEventRows(options, SEED_CHUNK_SIZE));
  }

  async getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const query = this.prepared.get<'organizationId' | 'id'>('API key by id', (slot) =>
      this.db
        .selectFrom('api_keys')
        .select(API_KEY_SELECTION)
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id')),
    );
    const [row] = await this.run(query, { organizationId, id });
    return row && apiKeyFromValues(row as ApiKeyValues);
  }

  async listApiKeys({ organizationId, limit, cursor, filters, now }: ListApiKeysQuery): Promise<ListApiKeysResult> {
    const statuses = statusesOf(filters?.status);
    let anchor: { createdAt: unknown; id: unknown } | undefined;
    if (cursor) {
      const anchorQuery = this.prepared.get<'organizationId' | 'id'>('API key position by id', (slot) =>
        this.db
          .selectFrom('api_keys')
          .select(['created_at', 'id'])
          .where('organization_id', '=', slot('organizationId'))
          .where('id', '=', slot('id')),
      );
      const [position] = await this.run(anchorQuery, { organizationId, id: cursor.id });
      if (!position) {
        return { kind: 'cursor_not_found' };
      }
      anchor = { createdAt: position[0], id: position[1] };
    }

    const workspaceId = filters?.workspaceId;
    const createdByUserId = filters?.createdByUserId;
    // Walking backwards reads the index in ascending order from the cursor, then reverses the page.
    const backwards = cursor?.direction === 'before';
    // The workspace filter: none, a workspace ID, or null for the organization's default workspace.
    const workspace = workspaceId === undefined ? 'none' : workspaceId === null ? 'default' : 'id';
    const shape =
      `API key page:${statuses?.join('+')}:${workspace}:` + `${createdByUserId !== undefined}:${cursor?.direction}`;
    const query = this.prepared.get<ListSlot>(shape, (slot) => {
      const order = backwards ? 'asc' : 'desc';
      let select = this.db
        .selectFrom('api_keys')
        .select(API_KEY_SELECTION)
        .where('organization_id', '=', slot('organizationId'));
      if (statuses !== undefined) {
        select = select.where(statusCondition(statuses, slot));
      }
      if (workspace === 'id') {
        select = select.where('workspace_id', '=', slot('workspaceId'));
      } else if (workspace === 'default') {
        // A literal scope, so that PostgreSQL matches the predicate of the default workspace's partial index
        // (migration 0004): it cannot read `workspace_id is null` from an index in page order otherwise.
        select = select.where(sql<SqlBool>`workspace_id is null and scope = 'workspace'`);
      }
      if (createdByUserId !== undefined) {
        select = select.where('created_by_type', '=', 'user').where('created_by_id', '=', slot('createdByUserId'));
      }
      if (cursor) {
        select = select.where(({ eb, refTuple, tuple }) =>
          eb(refTuple('created_at', 'id'), backwards ? '>' : '<', tuple(slot('anchorCreatedAt'), slot('anchorId'))),
        );
      }
      return select.orderBy('created_at', order).orderBy('id', order).limit(slot('limitPlusOne'));
    });
    const at = now ?? nowMicros();
    const rows = await this.run(query, {
      organizationId,
      now: at,
      minusNow: -at,
      workspaceId,
      createdByUserId,
      anchorCreatedAt: anchor?.createdAt,
      anchorId: anchor?.id,
      limitPlusOne: limit + 1,
    });

    const { page, hasMore } = pageOf(rows, limit, backwards);
    return { kind: 'page', keys: page.map((row) => apiKeyFromValues(row as ApiKeyValues)), hasMore };
  }

  async updateApiKey(
    organizationId: string,
    id: string,
    patch: ApiKeyPatch,
    context = OPERATOR_CHANGES,
  ): Promise<ApiKeyRecord | undefined> {
    if (patch.name === undefined && patch.status === undefined && patch.expiresAt === undefined) {
      throw new TypeError('updateApiKey needs a patch that changes a field');
    }
    const update = this.preparedApiKeyUpdate(organizationId, id, patch, context);
    const batches = this.db.isTransaction ? undefined : this.sameKeyBatches;
    // Keyed by organization too: the first write of a batch locks the row only if it finds it.
    const updated = batches
      ? ((await batches.write(`${organizationId}/${id}`, update)) as ApiKeyRecord | undefined)
      : update.finish(await this.write(update.statements));
    if (updated === undefined && revivesExpiredKeys(patch)) {
      // No row: no such key, or one that had expired when the statement held its lock (an expired key stays so).
      const key = await this.getApiKey(organizationId, id);
      if (key) {
        throw new ExpiredApiKeyError(key);
      }
    }
    return updated;
  }

  /** The statements of an update (compiled), and what makes its answer of their rows once they have committed. */
  private preparedApiKeyUpdate(
    organizationId: string,
    id: string,
    patch: ApiKeyPatch,
    context: ChangeContext,
  ): PreparedWrite<ApiKeyRecord | undefined> {
    const { name, status, expiresAt } = patch;
    const postgres = isPostgres(this.db);
    // Only an expired key's name and archival may change: the statements refuse the other changes (`unexpired`).
    const guarded = revivesExpiredKeys(patch);
    const values = {
      organizationId,
      id,
      name,
      status,
      expiresAt,
      // PostgreSQL's statement reads the database's clock once it holds the row's lock; SQLite's group commit puts
      // the time in when the write runs.
      updatedAt: postgres ? nowMicros() : WRITE_TIME,
      eventIdSuffix: this.recordsChanges ? auditEventIdSuffix() : undefined,
      ...updateEventValues(context),
    };
    const shape = `${name !== undefined}:${status !== undefined}:${expiresAt !== undefined}:${guarded}`;
    const update = this.prepared.get<UpdateSlot>(`API key update:${shape}`, (slot) => {
      let statement = this.db
        .updateTable('api_keys')
        .set({
          ...(name !== undefined && { name: slot('name') }),
          ...(status !== undefined && { status: slot('status') }),
          ...(expiresAt !== undefined && { expires_at: slot('expiresAt') }),
          updated_at: slot('updatedAt'),
        })
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id'));
      if (guarded) {
        statement = statement.where(unexpired(postgres ? DATABASE_NOW_MICROS : slot('updatedAt')));
      }
      return statement.returning(API_KEY_SELECTION);
    });
    let statements: PreparedQuery<UpdateSlot | UpdateEventSlot>[] = [update];
    let statementsUnderLock: PreparedQuery<UpdateSlot | UpdateEventSlot>[] | undefined;
    let optimisticStatements: PreparedQuery<UpdateSlot | UpdateEventSlot>[] | undefined;
    if (this.recordsChanges) {
      const changed = UPDATED_FIELDS.filter(({ field }) => patch[field] !== undefined);
      if (postgres) {
        const withEvent = (read: OldValuesRead) =>
          this.prepared.get<UpdateSlot | UpdateEventSlot>(`API key update with event:${shape}:${read}`, (slot) =>
            this.updateWithEvent(changed, guarded, slot, read),
          );
        statements = [withEvent('lock first')];
        statementsUnderLock = [withEvent('already locked')];
        optimisticStatements = [withEvent('if unchanged')];
      } else {
        statements = [
          this.prepared.get(`API key update event:${shape}`, (slot) => this.eventOfUpdate(changed, guarded, slot)),
          update,
        ];
      }
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
        this.keyChanged({ kind: 'api_key', id });
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
  private updateWithEvent(
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
        select id, xmin as version, name, status, expires_at from api_keys
        where organization_id = ${slot('organizationId')} and id = ${slot('id')}${lock}
      ), updated as (
        update api_keys as k set ${sql.join([...assignments, sql`updated_at = ${slot('updatedAt')}`])}
        from old where k.organization_id = ${slot('organizationId')} and k.id = old.id${unchanged}${conditions}
        returning ${sql.join(API_KEY_COLUMNS.map((column) => sql.ref(`k.${column}`)))},
          old.name as name_before, old.status as status_before, old.expires_at as expires_at_before
      ), event as (
        insert into audit_events (${sql.join(UPDATE_EVENT_COLUMNS.map((column) => sql.ref(column)))})
        select ${slot('organizationId')},
          ${sql.lit(AUDIT_EVENT_ID_PREFIX)} || lpad(to_hex(clock.now), ${sql.lit(AUDIT_EVENT_TIME_DIGITS)}, '0')
            || ${slot('eventIdSuffix')}, clock.now, 'api_key.updated',
          ${slot('actorType')}, ${slot('actorId')}, ${slot('actorName')}, 'api_key', id,
          name_before, name, status_before, status, expires_at_before, expires_at,
          ${slot('requestId')}, ${slot('clientIp')}, ${slot('clientUserAgent')}
        from updated cross join lateral (select ${DATABASE_NOW_MICROS} as now where updated.id is not null) as clock
        where name_before is distinct from name or status_before is distinct from status
          or expires_at_before is distinct from expires_at
      )
      select ${sql.join(API_KEY_COLUMNS.map((column) => sql.ref(column)))},
        (select u.last_used_at from api_key_usage as u where u.api_key_id = updated.id) as last_used_at
      from updated`;
    return { compile: () => statement.compile(this.db) };
  }

  /**
   * SQLite's event of an update, run just before it in the same write (SQLite has one writer at a time, so the key
   * cannot change in between): the key as it is, and as the patch leaves it, when they differ.
   */
  private eventOfUpdate(
    changed: readonly (typeof UPDATED_FIELDS)[number][],
    guarded: boolean,
    slot: SlotFunction<UpdateSlot | UpdateEventSlot>,
  ): Compilable {
    const after = (field: (typeof UPDATED_FIELDS)[number]) =>
      changed.includes(field) ? slot(field.field) : sql.ref(field.column);
    const [name, status, expiresAt] = UPDATED_FIELDS;
    const differs = changed.map((field) => sql`${sql.ref(field.column)} is not ${slot(field.field)}`);
    const conditions = guarded ? sql` and ${unexpired(slot('updatedAt'))}` : sql``;
    const statement = sql`insert into audit_events (${sql.join(UPDATE_EVENT_COLUMNS.map((column) => sql.ref(column)))})
      select ${slot('organizationId')},
        ${sql.lit(AUDIT_EVENT_ID_PREFIX)} || printf(${sql.lit(`%0${AUDIT_EVENT_TIME_DIGITS}x`)}, ${slot('updatedAt')})
          || ${slot('eventIdSuffix')}, ${slot('updatedAt')}, 'api_key.updated',
        ${slot('actorType')}, ${slot('actorId')}, ${slot('actorName')}, 'api_key', id,
        name, ${after(name)}, status, ${after(status)}, expires_at, ${after(expiresAt)},
        ${slot('requestId')}, ${slot('clientIp')}, ${slot('clientUserAgent')}
      from api_keys
      where organization_id = ${slot('organizationId')} and id = ${slot('id')}
        and (${sql.join(differs, sql` or `)})${conditions}`;
    return { compile: () => statement.compile(this.db) };
  }

  /**
   * Runs prepared queries as one write, through the adapter's group commit, and returns the rows of the last. Inside
   * `transaction()` they run on the transaction's connection, as part of it.
   */
  private async write(compiled: CompiledWrite): Promise<unknown[][]> {
    if (this.db.isTransaction) {
      let rows: unknown[] = [];
      const now = nowMicros();
      for (const { sql: text, parameters } of compiled) {
        ({ rows } = await this.db.executeQuery(CompiledQuery.raw(text, atWriteTime(parameters, now))));
      }
      return rows.map((row) => Object.values(row as object));
    }
    return this.adapter.writeRows(compiled);
  }

  async listAuditEvents({
    organizationId,
    limit,
    cursor,
    filters = {},
  }: ListAuditEventsQuery): Promise<ListAuditEventsResult> {
    const { targetId, actorId, types, occurredAfter, occurredBefore } = filters;
    if (types !== undefined && types.length === 0) {
      throw new TypeError('the type filter needs one or more types');
    }
    // Every bound is a bound on IDs, which sort as events occurred: the time filters' and the cursor's.
    const idAbove = occurredAfter === undefined ? undefined : idAfter(occurredAfter);
    const idBelow = occurredBefore === undefined ? undefined : idBefore(occurredBefore);
    const backwards = cursor?.direction === 'before';
    const typeList = types === undefined ? [undefined] : [...new Set(types)].sort();
    const shape = [
      'audit page',
      targetId !== undefined,
      actorId !== undefined,
      typeList.join('+'),
      idAbove !== undefined,
      idBelow !== undefined,
      cursor?.direction,
    ].join(':');
    const query = this.prepared.get<AuditPageSlot>(shape, (slot) => {
      const order = backwards ? 'asc' : 'desc';
      // One ordered range scan per type, merged: an index of (organization, type, id) serves each type in page order.
      const pageOfType = (type: string | undefined) => {
        let select = this.db
          .selectFrom('audit_events')
          .select(AUDIT_EVENTS_TABLE_COLUMNS)
          .where('organization_id', '=', slot('organizationId'));
        if (targetId !== undefined) {
          select = select.where('target_id', '=', slot('targetId'));
        }
        if (actorId !== undefined) {
          select = select.where('actor_id', '=', slot('actorId'));
        }
        if (type !== undefined) {
          select = select.where('type', '=', sql.lit(type) as never);
        }
        if (idAbove !== undefined) {
          select = select.where('id', '>', slot('idAbove'));
        }
        if (idBelow !== undefined) {
          select = select.where('id', '<', slot('idBelow'));
        }
        if (cursor) {
          // The cursor's own ID, read in the same statement: no event of the organization has it when it is null,
          // and then the page is empty (an index-only probe; told apart from an empty page below).
          const anchor = this.db
            .selectFrom('audit_events')
            .select('id')
            .where('organization_id', '=', slot('organizationId'))
            .where('id', '=', slot('cursorId'));
          select = select.where('id', backwards ? '>' : '<', anchor);
        }
        return select.orderBy('id', order).limit(slot('limitPlusOne'));
      };
      const [first, ...others] = typeList.map(pageOfType);
      if (!first || others.length === 0) {
        return first ?? pageOfType(undefined);
      }
      const merged = others.reduce(
        (union, page) => union.unionAll(this.db.selectFrom(page.as('page')).selectAll()),
        this.db.selectFrom(first.as('page')).selectAll(),
      );
      return this.db.selectFrom(merged.as('pages')).selectAll().orderBy('id', order).limit(slot('limitPlusOne'));
    });
    const rows = await this.run(query, {
      organizationId,
      targetId,
      actorId,
      idAbove,
      idBelow,
      cursorId: cursor?.id,
      limitPlusOne: limit + 1,
    });
    if (cursor && rows.length === 0 && !(await this.auditEventExists(organizationId, cursor.id))) {
      return { kind: 'cursor_not_found' };
    }
    const { page, hasMore } = pageOf(rows, limit, backwards);
    return { kind: 'page', events: page.map(auditEventFromValues), hasMore };
  }

  /** Whether the organization has an event of this ID: an index-only probe. */
  private async auditEventExists(organizationId: string, id: string): Promise<boolean> {
    const query = this.prepared.get<'organizationId' | 'id'>('audit event exists', (slot) =>
      this.db
        .selectFrom('audit_events')
        .select('id')
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id')),
    );
    return (await this.run(query, { organizationId, id })).length > 0;
  }

  async getAuditEvent(organizationId: string, id: string): Promise<AuditEventRecord | undefined> {
    const query = this.prepared.get<'organizationId' | 'id'>('audit event by id', (slot) =>
      this.db
        .selectFrom('audit_events')
        .select(AUDIT_EVENTS_TABLE_COLUMNS)
        .where('organization_id', '=', slot('organizationId'))
        .where('id', '=', slot('id')),
    );
    const [row] = await this.run(query, { organizationId, id });
    return row && auditEventFromValues(row);
  }

  async ping(): Promise<void> {
    await this.run(
      this.prepared.get('ping', () => this.db.selectNoFrom((eb) => eb.lit(1).as('one'))),
      {},
    );
  }

  async countActiveAdminKeys(): Promise<number> {
    const { count } = await this.db
      .selectFrom('admin_keys')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  poolStats(): ConnectionPoolStats[] | undefined {
    return this.adapter.poolStats?.();
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.adapter.close();
  }
}
