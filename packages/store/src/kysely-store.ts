import { CompiledQuery, type Kysely, Migrator, type Selectable } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import { type PreparedQuery, PreparedQueryCache } from './prepared-query.js';
import { newId } from './random.js';
import type { AdminKeysTable, ApiKeysTable, DatabaseSchema } from './schema.js';
import { hashesEqual, issueSecret } from './secrets.js';
import { seedRows } from './seed.js';
import { nowMicros } from './time.js';
import type {
  AdminKeyRecord,
  AdminKeyStatus,
  ApiKeyPatch,
  ApiKeyRecord,
  ConnectionPoolStats,
  CreatedAdminKey,
  CreatedApiKey,
  Credential,
  ListApiKeysQuery,
  ListApiKeysResult,
  NewApiKey,
  OrganizationRecord,
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
] as const;

const ADMIN_KEY_COLUMNS = ['id', 'organization_id', 'name', 'partial_key_hint', 'status', 'secret_hash'] as const;

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
  | 'status'
  | 'workspaceId'
  | 'createdByUserId'
  | 'anchorCreatedAt'
  | 'anchorId'
  | 'limitPlusOne';

/** The values an update takes. */
type UpdateSlot = 'organizationId' | 'id' | 'name' | 'status' | 'updatedAt';

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
];

/** Maps column values to a record. `created_at` may arrive as a string from drivers that return bigints so. */
function apiKeyFromValues(values: ApiKeyValues): ApiKeyRecord {
  return {
    id: values[0],
    name: values[1],
    workspaceId: values[2],
    createdAt: Number(values[3]),
    createdBy: { id: values[4], type: values[5] },
    partialKeyHint: values[6],
    status: values[7],
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
    const organization = { id: newId('org'), name };
    await this.db
      .insertInto('organizations')
      .values({ ...organization, created_at: nowMicros() })
      .execute();
    return organization;
  }

  async listOrganizations(): Promise<OrganizationRecord[]> {
    return this.db.selectFrom('organizations').select(['id', 'name']).orderBy('created_at').orderBy('id').execute();
  }

  async getOrganization(id: string): Promise<OrganizationRecord | undefined> {
    return this.db.selectFrom('organizations').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
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
    const issued = issueSecret('apiKey');
    const now = nowMicros();
    const row: ApiKeysTable = {
      id: newId('apikey'),
      organization_id: input.organizationId,
      name: input.name,
      workspace_id: input.workspaceId ?? null,
      created_at: now,
      created_by_id: input.createdBy.id,
      created_by_type: input.createdBy.type,
      partial_key_hint: issued.hint,
      secret_hash: issued.hash,
      status: input.status ?? 'active',
      updated_at: now,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { apiKey: toApiKey(row), secret: issued.secret };
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

  async listApiKeys({ organizationId, limit, cursor, filters }: ListApiKeysQuery): Promise<ListApiKeysResult> {
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

    const status = filters?.status;
    const workspaceId = filters?.workspaceId;
    const createdByUserId = filters?.createdByUserId;
    // Walking backwards reads the index in ascending order from the cursor, then reverses the page.
    const backwards = cursor?.direction === 'before';
    const shape =
      `API key page:${status !== undefined}:${workspaceId !== undefined}:` +
      `${createdByUserId !== undefined}:${cursor?.direction}`;
    const query = this.prepared.get<ListSlot>(shape, (slot) => {
      const order = backwards ? 'asc' : 'desc';
      let select = this.db
        .selectFrom('api_keys')
        .select(API_KEY_COLUMNS)
        .where('organization_id', '=', slot('organizationId'));
      if (status !== undefined) {
        select = select.where('status', '=', slot('status'));
      }
      if (workspaceId !== undefined) {
        select = select.where('workspace_id', '=', slot('workspaceId'));
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
    const rows = await this.run(query, {
      organizationId,
      status,
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
    const { name, status } = patch;
    if (name === undefined && status === undefined) {
      throw new TypeError('updateApiKey needs a patch that changes a field');
    }
    const query = this.prepared.get<UpdateSlot>(
      `API key update:${name !== undefined}:${status !== undefined}`,
      (slot) =>
        this.db
          .updateTable('api_keys')
          .set({
            ...(name !== undefined && { name: slot('name') }),
            ...(status !== undefined && { status: slot('status') }),
            updated_at: slot('updatedAt'),
          })
          .where('organization_id', '=', slot('organizationId'))
          .where('id', '=', slot('id'))
          .returning(API_KEY_COLUMNS),
    );
    const [row] = await this.run(query, { organizationId, id, name, status, updatedAt: nowMicros() }, 'write');
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
