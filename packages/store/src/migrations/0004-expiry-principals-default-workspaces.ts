import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import { identifierType, isPostgres } from '../dialect.js';
import { newId } from '../random.js';
import { nowMicros } from '../time.js';

/** A list index: its name, its key columns (names, or expressions), and for a partial index the rows it holds. */
interface ListIndex {
  name: string;
  columns: (string | RawBuilder<unknown>)[];
  where?: RawBuilder<SqlBool>;
}

/**
 * The signed expiry of a key: its expiry (never: the largest bigint) if active, minus it if inactive, null if
 * archived. At any `now` it puts the effective statuses of the keys that are not archived on one line: inactive
 * below -now, expired from -now to now, active above now. So a status, or a run of neighbouring statuses (the
 * older API's `inactive` is inactive or expired), is one range of one index key, which PostgreSQL checks inside the
 * index scan; an OR of conditions it could only check on each table row. The store's list query spells the same
 * expression, which PostgreSQL must see unchanged to use the index.
 */
const SIGNED_EXPIRY = sql`case status when 'active' then coalesce(expires_at, 9223372036854775807)
  when 'inactive' then -coalesce(expires_at, 9223372036854775807) end`;

/** Which keys the expiring index holds: those with an expiry that are not archived, where `expired` is found. */
const EXPIRING = sql<SqlBool>`expires_at is not null and status <> 'archived'`;

/** The keys of the organization's default workspace, as the store's list query spells them. */
const DEFAULT_WORKSPACE = sql<SqlBool>`workspace_id is null and scope = 'workspace'`;

/** The keys of a named workspace. */
const NAMED_WORKSPACE = sql<SqlBool>`workspace_id is not null`;

/** What a list page filters on or returns besides `organization_id`, `created_at` and `id` (SQLite). */
const PAGE_COLUMNS = [
  'status',
  'workspace_id',
  'scope',
  'created_by_type',
  'created_by_id',
  'name',
  'partial_key_hint',
  'expires_at',
  'principal_type',
  'principal_id',
];

/** A covering index: the organization, the filter columns, the page order, then every other page column. */
function covering(name: string, filters: string[], where?: RawBuilder<SqlBool>): ListIndex {
  const rest = PAGE_COLUMNS.filter((column) => !filters.includes(column));
  return { name, columns: ['organization_id', ...filters, 'created_at', 'id', ...rest], ...(where && { where }) };
}

/**
 * The SQLite list indexes: those of 0002 with the new page columns, and one for `expired`. SQLite reads
 * `workspace_id is null` as an equality, so the workspace index serves the default workspace too (its range holds
 * the keys with organization scope as well, which the index's `scope` skips).
 */
const SQLITE_COVERING: ListIndex[] = [
  covering('api_keys_org_created_covering_idx', []),
  covering('api_keys_org_status_created_covering_idx', ['status']),
  covering('api_keys_org_workspace_created_covering_idx', ['workspace_id']),
  covering('api_keys_org_creator_created_covering_idx', ['created_by_type', 'created_by_id']),
  covering('api_keys_org_expiring_created_covering_idx', [], EXPIRING),
];

/**
 * The PostgreSQL list indexes: those of 0003 with the signed expiry as one more trailing key (and as the only one
 * of the index without a filter, which now serves the status sets that no stored status selects), and `scope` next
 * to every trailing `workspace_id`; one for `expired`. PostgreSQL takes only an equality, never `is null`, as
 * fixing a column for the page order, so the default workspace's keys (`workspace_id` null) have a partial index of
 * their own, and the workspace index holds only the named workspaces. Still no `name`, so that a rename stays a
 * heap-only update.
 */
const POSTGRES_FILTERING: ListIndex[] = [
  { name: 'api_keys_org_created_filters_idx', columns: ['organization_id', 'created_at', 'id', SIGNED_EXPIRY] },
  {
    name: 'api_keys_org_status_created_filters_idx',
    columns: [
      'organization_id',
      'status',
      'created_at',
      'id',
      SIGNED_EXPIRY,
      'workspace_id',
      'scope',
      'created_by_type',
      'created_by_id',
    ],
  },
  {
    name: 'api_keys_org_workspace_created_filters_idx',
    columns: [
      'organization_id',
      'workspace_id',
      'created_at',
      'id',
      'status',
      SIGNED_EXPIRY,
      'created_by_type',
      'created_by_id',
    ],
    where: NAMED_WORKSPACE,
  },
  {
    name: 'api_keys_org_default_workspace_created_filters_idx',
    columns: ['organization_id', 'created_at', 'id', 'status', SIGNED_EXPIRY, 'created_by_type', 'created_by_id'],
    where: DEFAULT_WORKSPACE,
  },
  {
    name: 'api_keys_org_creator_created_filters_idx',
    columns: [
      'organization_id',
      'created_by_type',
      'created_by_id',
      'created_at',
      'id',
      'status',
      SIGNED_EXPIRY,
      'workspace_id',
      'scope',
    ],
  },
  {
    name: 'api_keys_org_expiring_created_filters_idx',
    columns: [
      'organization_id',
      'created_at',
      'id',
      'expires_at',
      'workspace_id',
      'scope',
      'created_by_type',
      'created_by_id',
    ],
    where: EXPIRING,
  },
];

/** The covering list indexes of 0002 (which SQLite kept through 0003), spelled out. */
const SQLITE_BEFORE: ListIndex[] = [
  {
    name: 'api_keys_org_created_covering_idx',
    columns: [
      'organization_id',
      'created_at',
      'id',
      'status',
      'workspace_id',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_status_created_covering_idx',
    columns: [
      'organization_id',
      'status',
      'created_at',
      'id',
      'workspace_id',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_workspace_created_covering_idx',
    columns: [
      'organization_id',
      'workspace_id',
      'created_at',
      'id',
      'status',
      'created_by_type',
      'created_by_id',
      'name',
      'partial_key_hint',
    ],
  },
  {
    name: 'api_keys_org_creator_created_covering_idx',
    columns: [
      'organization_id',
      'created_by_type',
      'created_by_id',
      'created_at',
      'id',
      'status',
      'workspace_id',
      'name',
      'partial_key_hint',
    ],
  },
];

/** The PostgreSQL list indexes of 0003, spelled out. */
const POSTGRES_BEFORE: ListIndex[] = [
  { name: 'api_keys_org_created_idx', columns: ['organization_id', 'created_at', 'id'] },
  {
    name: 'api_keys_org_status_created_filters_idx',
    columns: ['organization_id', 'status', 'created_at', 'id', 'workspace_id', 'created_by_type', 'created_by_id'],
  },
  {
    name: 'api_keys_org_workspace_created_filters_idx',
    columns: ['organization_id', 'workspace_id', 'created_at', 'id', 'status', 'created_by_type', 'created_by_id'],
  },
  {
    name: 'api_keys_org_creator_created_filters_idx',
    columns: ['organization_id', 'created_by_type', 'created_by_id', 'created_at', 'id', 'status', 'workspace_id'],
  },
];

const DEFAULT_WORKSPACE_INDEX = 'organizations_default_workspace_id_idx';

/** The type of identifier columns, for raw SQL. */
function identifierSql(db: Kysely<unknown>): RawBuilder<unknown> {
  const type = identifierType(db);
  return typeof type === 'string' ? sql.raw(type) : type;
}

/** Creates indexes the way 0002 and 0003 did, so that SQLite, which keeps their SQL, gets it back unchanged. */
async function createIndexes(db: Kysely<unknown>, indexes: ListIndex[]): Promise<void> {
  for (const { name, columns, where } of indexes) {
    const names = columns.filter((column) => typeof column === 'string');
    const builder = db.schema.createIndex(name).on('api_keys');
    const keyed =
      names.length === columns.length
        ? builder.columns(names)
        : builder.expression(
            sql.join(columns.map((column) => (typeof column === 'string' ? sql.ref(column) : sql`(${column})`))),
          );
    await (where ? keyed.where(where) : keyed).execute();
  }
}

async function dropIndexes(db: Kysely<unknown>, indexes: ListIndex[]): Promise<void> {
  for (const { name } of indexes) {
    await db.schema.dropIndex(name).execute();
  }
}

/**
 * Runs `work` in one transaction. Kysely runs PostgreSQL migrations in one already, but not SQLite ones, where
 * this one must not stop halfway (it rebuilds a table).
 */
async function atomically(db: Kysely<unknown>, work: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
  if (db.isTransaction) {
    await work(db);
  } else {
    await db.transaction().execute(work);
  }
}

/**
 * Adds `organizations.default_workspace_id` (not null, unique), with a new ID for every organization. SQLite cannot
 * make an added column NOT NULL, so there the table is rebuilt, the way its documentation lays out: the caller has
 * switched foreign keys off, and the rows that reference organizations are checked before the commit.
 */
async function addDefaultWorkspaces(db: Kysely<unknown>): Promise<void> {
  const organizations = await sql<{ id: string; name: string; created_at: number }>`
    select id, name, created_at from organizations`.execute(db);
  const identifier = identifierType(db);
  if (isPostgres(db)) {
    await sql`alter table organizations add column default_workspace_id ${identifierSql(db)}`.execute(db);
    for (const { id } of organizations.rows) {
      await sql`update organizations set default_workspace_id = ${newId('wrkspc')} where id = ${id}`.execute(db);
    }
    await sql`alter table organizations alter column default_workspace_id set not null`.execute(db);
  } else {
    await db.schema
      .createTable('organizations_new')
      .addColumn('id', identifier, (col) => col.primaryKey())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('default_workspace_id', identifier, (col) => col.notNull())
      .execute();
    for (const { id, name, created_at } of organizations.rows) {
      await sql`insert into organizations_new (id, name, created_at, default_workspace_id)
        values (${id}, ${name}, ${created_at}, ${newId('wrkspc')})`.execute(db);
    }
    await db.schema.dropTable('organizations').execute();
    await db.schema.alterTable('organizations_new').renameTo('organizations').execute();
    const violations = await sql`pragma foreign_key_check`.execute(db);
    if (violations.rows.length > 0) {
      throw new Error(`rebuilding organizations broke ${violations.rows.length} foreign keys`);
    }
  }
  await db.schema
    .createIndex(DEFAULT_WORKSPACE_INDEX)
    .on('organizations')
    .column('default_workspace_id')
    .unique()
    .execute();
}

/**
 * Key expiry, principal-bound keys and organization scope, and a real ID for each organization's default workspace:
 *
 * - `organizations.default_workspace_id`. The keys of the default workspace keep `workspace_id` null: no key is
 *   rewritten;
 * - `api_keys.expires_at` (null for never), `principal_type` and `principal_id` (both or neither), and `scope`:
 *   `workspace` for every existing key, `organization` for a key of no workspace, which must have a principal. The
 *   checks are column constraints, the only kind SQLite can add to a table, and it checks them on the rows already
 *   there. None of the new columns makes PostgreSQL rewrite the table (`scope` has a constant default);
 * - list indexes that return the new columns (SQLite, covering) and check the effective status and the scope inside
 *   the index (PostgreSQL, through the signed expiry), plus an index of the keys with an expiry, for `expired`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  const [foreignKeys] = postgres ? [] : (await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows;
  // A no-op inside a transaction, so it comes before the one below.
  if (foreignKeys?.foreign_keys) {
    await sql`pragma foreign_keys = off`.execute(db);
  }
  try {
    await atomically(db, async (db) => {
      await dropIndexes(db, postgres ? POSTGRES_BEFORE : SQLITE_BEFORE);
      await addDefaultWorkspaces(db);
      await sql`alter table api_keys add column expires_at bigint`.execute(db);
      await sql`alter table api_keys add column principal_type text
        constraint api_keys_principal_type_check check (principal_type in ('user', 'service_account'))`.execute(db);
      await sql`alter table api_keys add column principal_id ${identifierSql(db)}
        constraint api_keys_principal_check check ((principal_type is null) = (principal_id is null))`.execute(db);
      await sql`alter table api_keys add column scope text not null default 'workspace'
        constraint api_keys_scope_check check (scope in ('workspace', 'organization'))
        constraint api_keys_organization_scope_check
          check (scope = 'workspace' or (workspace_id is null and principal_type is not null))`.execute(db);
      await createIndexes(db, postgres ? POSTGRES_FILTERING : SQLITE_COVERING);
    });
  } finally {
    if (foreignKeys?.foreign_keys) {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  }
}

/**
 * Restores the schema of 0003. What it cannot hold is lost: expiries (a key that has expired becomes inactive, as
 * the older API shows it, rather than valid again), scopes and principals (a key with organization scope, whose
 * workspace_id is null, falls into the default workspace), and the default workspace IDs (a key stored with its
 * organization's, which the store takes as given, gets workspace_id null like the other keys of that workspace).
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  await atomically(db, async (db) => {
    await dropIndexes(db, postgres ? POSTGRES_FILTERING : SQLITE_COVERING);
    await sql`update api_keys set status = 'inactive'
      where status = 'active' and expires_at <= ${nowMicros()}`.execute(db);
    // First the columns whose constraints name the others (SQLite drops a column only once no other column's
    // constraint names it).
    await sql`alter table api_keys drop column scope`.execute(db);
    await sql`alter table api_keys drop column principal_id`.execute(db);
    await sql`alter table api_keys drop column principal_type`.execute(db);
    await sql`alter table api_keys drop column expires_at`.execute(db);
    await sql`update api_keys set workspace_id = null where workspace_id = (
        select default_workspace_id from organizations where organizations.id = api_keys.organization_id
      )`.execute(db);
    await db.schema.dropIndex(DEFAULT_WORKSPACE_INDEX).execute();
    await sql`alter table organizations drop column default_workspace_id`.execute(db);
    await createIndexes(db, postgres ? POSTGRES_BEFORE : SQLITE_BEFORE);
  });
}
