import type { ApiKey } from '@apikeys/api-types';
import { type Kysely, Migrator, type Selectable } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import { newId } from './random.js';
import type { AdminKeysTable, ApiKeysTable, DatabaseSchema } from './schema.js';
import { hashesEqual, issueSecret } from './secrets.js';
import { seedRows } from './seed.js';
import { microsToRfc3339, nowMicros } from './time.js';
import type {
  AdminKey,
  AdminKeyStatus,
  ApiKeyPage,
  ApiKeyPatch,
  CreatedAdminKey,
  CreatedApiKey,
  Credential,
  ListApiKeysQuery,
  NewApiKey,
  Organization,
  SeedOptions,
  Store,
} from './types.js';

/** The few things that differ between database engines; everything else is one Kysely implementation. */
export interface DialectAdapter {
  /**
   * Inserts many rows, chunk by chunk, as fast as the engine allows; each chunk commits on its own. Called outside
   * any Kysely transaction. Returns the number of rows inserted.
   */
  insertApiKeyRows(chunks: Iterable<ApiKeysTable[]>): Promise<number>;
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

type ApiKeyRow = Pick<Selectable<ApiKeysTable>, (typeof API_KEY_COLUMNS)[number]>;

// Rows per chunk: large enough to amortize each commit, small enough to keep memory flat for a million keys.
const SEED_CHUNK_SIZE = 50_000;

/** Maps a row to the API's field names. `created_at` may arrive as a string from drivers that return bigints so. */
function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    type: 'api_key',
    name: row.name,
    workspace_id: row.workspace_id,
    created_at: microsToRfc3339(Number(row.created_at)),
    created_by: { id: row.created_by_id, type: row.created_by_type },
    partial_key_hint: row.partial_key_hint,
    status: row.status,
  };
}

function toAdminKey(
  row: Pick<AdminKeysTable, 'id' | 'organization_id' | 'name' | 'partial_key_hint' | 'status'>,
): AdminKey {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    partialKeyHint: row.partial_key_hint,
    status: row.status,
  };
}

/** The store on any Kysely dialect. */
export class KyselyStore implements Store {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly adapter: DialectAdapter,
  ) {}

  /** Brings the schema to the latest migration and returns the names of the migrations it applied. */
  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      throw new Error('database migration failed', { cause: error });
    }
    return (results ?? []).map((result) => result.migrationName);
  }

  async transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) {
      return work(this);
    }
    return this.db.transaction().execute((trx) => work(new KyselyStore(trx, this.adapter)));
  }

  async createOrganization(name: string): Promise<Organization> {
    const organization = { id: newId('org'), name };
    await this.db
      .insertInto('organizations')
      .values({ ...organization, created_at: nowMicros() })
      .execute();
    return organization;
  }

  async listOrganizations(): Promise<Organization[]> {
    return this.db.selectFrom('organizations').select(['id', 'name']).orderBy('created_at').orderBy('id').execute();
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
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

  async setAdminKeyStatus(id: string, status: AdminKeyStatus): Promise<AdminKey | undefined> {
    const row = await this.db
      .updateTable('admin_keys')
      .set({ status })
      .where('id', '=', id)
      .returning(ADMIN_KEY_COLUMNS)
      .executeTakeFirst();
    return row && toAdminKey(row);
  }

  async findCredential(secretHash: string): Promise<Credential> {
    const admin = await this.db
      .selectFrom('admin_keys')
      .select(ADMIN_KEY_COLUMNS)
      .where('secret_hash', '=', secretHash)
      .executeTakeFirst();
    if (admin && hashesEqual(admin.secret_hash, secretHash)) {
      return { kind: 'admin_key', adminKey: toAdminKey(admin) };
    }
    const apiKey = await this.db
      .selectFrom('api_keys')
      .select(['organization_id', 'secret_hash'])
      .where('secret_hash', '=', secretHash)
      .executeTakeFirst();
    if (apiKey && hashesEqual(apiKey.secret_hash, secretHash)) {
      return { kind: 'api_key', organizationId: apiKey.organization_id };
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

  async getApiKey(organizationId: string, id: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(API_KEY_COLUMNS)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toApiKey(row);
  }

  async listApiKeys({ organizationId, limit, cursor, filters }: ListApiKeysQuery): Promise<ApiKeyPage | undefined> {
    let anchor: { created_at: number; id: string } | undefined;
    if (cursor) {
      anchor = await this.db
        .selectFrom('api_keys')
        .select(['created_at', 'id'])
        .where('organization_id', '=', organizationId)
        .where('id', '=', cursor.id)
        .executeTakeFirst();
      if (!anchor) {
        return undefined;
      }
    }

    // Walking backwards reads the index in ascending order from the cursor, then reverses the page.
    const backwards = cursor?.direction === 'before';
    const order = backwards ? 'asc' : 'desc';
    let query = this.db.selectFrom('api_keys').select(API_KEY_COLUMNS).where('organization_id', '=', organizationId);
    if (filters?.status !== undefined) {
      query = query.where('status', '=', filters.status);
    }
    if (filters?.workspaceId !== undefined) {
      query = query.where('workspace_id', '=', filters.workspaceId);
    }
    if (filters?.createdByUserId !== undefined) {
      query = query.where('created_by_type', '=', 'user').where('created_by_id', '=', filters.createdByUserId);
    }
    if (anchor) {
      const position = anchor;
      query = query.where(({ eb, refTuple, tuple }) =>
        eb(refTuple('created_at', 'id'), backwards ? '>' : '<', tuple(position.created_at, position.id)),
      );
    }
    const rows = await query
      .orderBy('created_at', order)
      .orderBy('id', order)
      .limit(limit + 1)
      .execute();

    const hasMore = rows.length > limit;
    const page = hasMore ? rows.slice(0, limit) : rows;
    if (backwards) {
      page.reverse();
    }
    return { data: page.map(toApiKey), hasMore };
  }

  async updateApiKey(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined> {
    if (patch.name === undefined && patch.status === undefined) {
      return this.getApiKey(organizationId, id);
    }
    const row = await this.db
      .updateTable('api_keys')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.status !== undefined && { status: patch.status }),
        updated_at: nowMicros(),
      })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returning(API_KEY_COLUMNS)
      .executeTakeFirst();
    return row && toApiKey(row);
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.adapter.close();
  }
}
