import {
  CompiledQuery,
  type InsertObject,
  type Kysely,
  Migrator,
  type RawBuilder,
  type Selectable,
  type SqlBool,
  sql,
} from 'kysely';
import { isPostgres } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import { type PreparedQuery, PreparedQueryCache, type SlotFunction } from './prepared-query.js';
import { newId } from './random.js';
import type { AdminKeysTable, ApiKeysTable, DatabaseSchema } from './schema.js';
import { hashesEqual, issueSecret } from './secrets.js';
import { seedRows } from './seed.js';
import { EFFECTIVE_API_KEY_STATUSES, effectiveStatus } from './statuses.js';
import { nowMicros } from './time.js';
import type {
  AdminKeyRecord,
  AdminKeyStatus,
  ApiKeyFilters,
  ApiKeyPatch,
  ApiKeyRecord,
  ConnectionPoolStats,
  CreatedAdminKey,
  CreatedApiKey,
  Credential,
  EffectiveApiKeyStatus,
  ListApiKeysQuery,
  ListApiKeysResult,
  NewApiKey,
  OrganizationRecord,
  RotateApiKeyInput,
  RotateApiKeyResult,
  SchemaMigrator,
  SeedOptions,
  Store,
} from './types.js';

/** The few things that differ between database engines; everything else is one Kysely implementation. */
export interface DialectAdapter {
  /**
   * Inserts many rows, as fast as the engine allows, committing every so many rows (chunks are small: an adapter
   * groups them into larger transactions). Called outside any Kysely transaction. Returns the number of rows
   * inserted.
   */
  insertApiKeyRows(chunks: Iterable<ApiKeysTable[]>): Promise<number>;
  /**
   * Runs one statement on its own (autocommit), outside any transaction of the caller, and returns its rows as
   * arrays of column values in the order of the select or returning list (no row objects: they cost more than the
   * read itself on large pages). It must report the statement to the store's `onQuery` listener.
   */
  queryRows(sql: string, parameters: unknown[]): Promise<unknown[][]>;
  /**
   * Runs one write statement that returns rows (`returning`), like `queryRows`, except that the engine may commit
   * it together with other writes issued at about the same time (group commit). It resolves only once the write is
   * durable, and a write that fails fails alone.
   */
  writeRows(sql: string, parameters: unknown[]): Promise<unknown[][]>;
  /** How busy the engine's connection pools are; absent for an engine without pools. */
  poolStats?(): ConnectionPoolStats[];
  /** Releases the engine's connections. */
  close(): Promise<void>;
}

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

const ORGANIZATION_COLUMNS = ['id', 'name', 'default_workspace_id as defaultWorkspaceId'] as const;

/** An admin key row as column values, in the order of `ADMIN_KEY_COLUMNS`. */
type AdminKeyValues = [
  id: string,
  organization_id: string,
  name: string,
  partial_key_hint: string,
  status: AdminKeysTable['status'],
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

type ApiKeyRow = Pick<Selectable<ApiKeysTable>, (typeof API_KEY_COLUMNS)[number]>;

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
];

/** Maps column values to a record. Timestamps may arrive as strings from drivers that return bigints so. */
function apiKeyFromValues(values: ApiKeyValues): ApiKeyRecord {
  const [, , , , , , , , expiresAt, principalType, principalId, scope] = values;
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
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return apiKeyFromValues(API_KEY_COLUMNS.map((column) => row[column]) as ApiKeyValues);
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
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly adapter: DialectAdapter,
    private readonly prepared = new PreparedQueryCache(),
  ) {}

  /**
   * Runs a prepared query and returns its rows as column values; a `write` goes through the adapter's group commit.
   * Inside `transaction()` it goes through the transaction's connection, so that it sees, and belongs to, the
   * transaction.
   */
  private async run<Name extends string>(
    query: PreparedQuery<Name>,
    values: Readonly<Record<Name, unknown>>,
    kind: 'read' | 'write' = 'read',
  ): Promise<unknown[][]> {
    const parameters = query.parameters(values);
    if (this.db.isTransaction) {
      const { rows } = await this.db.executeQuery(CompiledQuery.raw(query.sql, parameters));
      return rows.map((row) => Object.values(row as object));
    }
    return kind === 'write'
      ? this.adapter.writeRows(query.sql, parameters)
      : this.adapter.queryRows(query.sql, parameters);
  }

  async transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) {
      return work(this);
    }
    return this.db.transaction().execute((trx) => work(new KyselyStore(trx, this.adapter, this.prepared)));
  }

  async createOrganization(name: string): Promise<OrganizationRecord> {
    const organization = { id: newId('org'), name, defaultWorkspaceId: newId('wrkspc') };
    await this.db
      .insertInto('organizations')
      .values({
        id: organization.id,
        name,
        default_workspace_id: organization.defaultWorkspaceId,
        created_at: nowMicros(),
      })
      .execute();
    return organization;
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

  async createAdminKey(input: { organizationId: string; name: string }): Promise<CreatedAdminKey> {
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
    await this.db.insertInto('admin_keys').values(row).execute();
    return { adminKey: toAdminKey(row), secret: issued.secret };
  }

  async setAdminKeyStatus(id: string, status: AdminKeyStatus): Promise<AdminKeyRecord | undefined> {
    const row = await this.db
      .updateTable('admin_keys')
      .set({ status })
      .where('id', '=', id)
      .returning(ADMIN_KEY_COLUMNS)
      .executeTakeFirst();
    return row && toAdminKey(row);
  }

  async findCredential(secretHash: string): Promise<Credential> {
    const adminQuery = this.prepared.get<'hash'>('admin key by hash', (slot) =>
      this.db.selectFrom('admin_keys').select(ADMIN_KEY_COLUMNS).where('secret_hash', '=', slot('hash')),
    );
    const [admin] = await this.run(adminQuery, { hash: secretHash });
    if (admin) {
      const [id, organizationId, name, partialKeyHint, status, storedHash] = admin as AdminKeyValues;
      if (hashesEqual(storedHash, secretHash)) {
        return { kind: 'admin_key', adminKey: { id, organizationId, name, partialKeyHint, status } };
      }
    }
    const apiKeyQuery = this.prepared.get<'hash'>('API key by hash', (slot) =>
      this.db.selectFrom('api_keys').select(['organization_id', 'secret_hash']).where('secret_hash', '=', slot('hash')),
    );
    const [apiKey] = await this.run(apiKeyQuery, { hash: secretHash });
    if (apiKey) {
      const [organizationId, storedHash] = apiKey as [string, string];
      if (hashesEqual(storedHash, secretHash)) {
        return { kind: 'api_key', organizationId };
      }
    }
    return { kind: 'unknown' };
  }

  async createApiKey(input: NewApiKey): Promise<CreatedApiKey> {
    const { organizationId, scope = 'workspace', workspaceId, principal } = input;
    if (scope === 'organization') {
      if (!principal || workspaceId != null) {
        throw new TypeError('a key with organization scope needs a principal and takes no workspace');
      }
    } else if (scope !== 'workspace') {
      throw new TypeError(`unknown scope: ${String(scope)}`);
    }
    return this.insertApiKey({
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
    });
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
      .returning(API_KEY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { apiKey: toApiKey(row), secret: issued.secret };
  }

  async rotateApiKey(input: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    const { organizationId, id, gracePeriodMicros } = input;
    if (!Number.isSafeInteger(gracePeriodMicros) || gracePeriodMicros < 0) {
      throw new TypeError('the grace period must be a whole number of microseconds, zero or more');
    }
    if (!this.db.isTransaction) {
      return this.db
        .transaction()
        .execute((trx) => new KyselyStore(trx, this.adapter, this.prepared).rotateApiKey(input));
    }
    let read = this.db
      .selectFrom('api_keys')
      .select(API_KEY_COLUMNS)
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
    // Read after the lock, so that a rotation that waited for another one is later than it.
    const now = input.now ?? nowMicros();
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
      .returning(API_KEY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { kind: 'rotated', created, previous: toApiKey(previous) };
  }

  async seedApiKeys(options: SeedOptions): Promise<number> {
    if (this.db.isTransaction) {
      // The bulk path writes through the engine's own connection, outside this transaction.
      throw new Error('seedApiKeys cannot run inside transaction()');
    }
    return this.adapter.insertApiKeyRows(seedRows(options, SEED_CHUNK_SIZE));
  }

  async getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const query = this.prepared.get<'organizationId' | 'id'>('API key by id', (slot) =>
      this.db
        .selectFrom('api_keys')
        .select(API_KEY_COLUMNS)
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
        .select(API_KEY_COLUMNS)
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

    const hasMore = rows.length > limit;
    const page = hasMore ? rows.slice(0, limit) : rows;
    if (backwards) {
      page.reverse();
    }
    return { kind: 'page', keys: page.map((row) => apiKeyFromValues(row as ApiKeyValues)), hasMore };
  }

  async updateApiKey(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined> {
    const { name, status, expiresAt } = patch;
    if (name === undefined && status === undefined && expiresAt === undefined) {
      throw new TypeError('updateApiKey needs a patch that changes a field');
    }
    const query = this.prepared.get<UpdateSlot>(
      `API key update:${name !== undefined}:${status !== undefined}:${expiresAt !== undefined}`,
      (slot) =>
        this.db
          .updateTable('api_keys')
          .set({
            ...(name !== undefined && { name: slot('name') }),
            ...(status !== undefined && { status: slot('status') }),
            ...(expiresAt !== undefined && { expires_at: slot('expiresAt') }),
            updated_at: slot('updatedAt'),
          })
          .where('organization_id', '=', slot('organizationId'))
          .where('id', '=', slot('id'))
          .returning(API_KEY_COLUMNS),
    );
    const [row] = await this.run(
      query,
      { organizationId, id, name, status, expiresAt, updatedAt: nowMicros() },
      'write',
    );
    return row && apiKeyFromValues(row as ApiKeyValues);
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
