import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/migrations/index.js';
import { openStore, type StoreLocation } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { AUDIT_EVENTS_TABLE_COLUMNS } from '../src/schema.js';
import type { Store } from '../src/types.js';
import { POSTGRES, testEngines } from '../testing/engines.js';
import { migrationNames } from '../testing/index.js';
import { createTestDatabase } from '../testing/postgres.js';
import { insertLegacyKeys, type LegacyKeyRow } from './legacy-keys.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../src/migrations/', import.meta.url));
/** The files of shipped migrations: `0001-initial.ts`, ... */
const MIGRATION_FILES = readdirSync(MIGRATIONS_DIR).filter((file) => /^\d{4}-.+\.ts$/.test(file));
const BEFORE_DEFAULT_WORKSPACES = '0003-postgres-list-indexes';
const WORKSPACE_ID = /^wrkspc_[A-Za-z0-9]{24}$/;
const OTHER_ORGANIZATION = 'org_other';

describe('migrations', () => {
  it('are registered one per file, in the order of their file names', async () => {
    expect(MIGRATION_FILES.length).toBeGreaterThan(0);
    expect(await migrationNames()).toEqual(MIGRATION_FILES.map((file) => file.replace(/\.ts$/, '')).sort());
  });

  it.each(MIGRATION_FILES)('%s imports nothing from another migration, so that it stays as it shipped', (file) => {
    const source = readFileSync(`${MIGRATIONS_DIR}${file}`, 'utf8');
    const specifiers = [...source.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');

    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((specifier) => /(^|\/)\d{4}-[^/]*$/.test(specifier))).toEqual([]);
  });
});

/** A new, empty database of one engine, with a migrator of its own beside the store. */
interface Subject {
  db: Kysely<unknown>;
  location: StoreLocation;
  /** The column names of a table. */
  columns(table: string): Promise<string[]>;
  /** The file a PostgreSQL table's rows are in, which a rewrite of the table replaces; null on SQLite. */
  tableFile(table: string): Promise<string | null>;
  cleanup(): Promise<void>;
}

async function sqliteSubject(): Promise<Subject> {
  const dir = await mkdtemp(join(tmpdir(), 'apikeys-migration-test-'));
  const path = join(dir, 'api-keys.sqlite');
  const database = new Database(path);
  // As the store's own connection has it, so that 0004 must switch it off to rebuild organizations.
  database.pragma('foreign_keys = ON');
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
  return {
    db,
    location: { kind: 'sqlite', path },
    async columns(table) {
      return (database.pragma(`table_info(${table})`) as { name: string }[]).map((column) => column.name);
    },
    async tableFile() {
      return null;
    },
    async cleanup() {
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSubject(): Promise<Subject> {
  const database = await createTestDatabase();
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }),
  });
  return {
    db,
    location: { kind: 'postgres', url: database.url },
    async columns(table) {
      const { rows } = await sql<{ name: string }>`select column_name as name from information_schema.columns
        where table_name = ${table} order by ordinal_position`.execute(db);
      return rows.map((row) => row.name);
    },
    async tableFile(table) {
      const { rows } = await sql<{
        file: string;
      }>`select pg_relation_filenode(${table}::regclass)::text as file`.execute(db);
      return rows[0]?.file ?? null;
    },
    async cleanup() {
      await db.destroy();
      await database.drop();
    },
  };
}

/** Migrates a database up or down to `migration` (or to the latest one), and expects no error. */
async function migrate(db: Kysely<unknown>, migration: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await (migration === 'latest' ? migrator.migrateToLatest() : migrator.migrateTo(migration));
  expect(error).toBeUndefined();
}

/** The engines of the run (`testEngines`), each with how to open a subject on it. */
const engines = await testEngines();
const ENGINES = engines.map((engine) => ({
  engine: engine.name,
  open: engine.kind === 'sqlite' ? sqliteSubject : postgresSubject,
}));

describe.each(ENGINES)('0004 on $engine', ({ open }) => {
  let subject: Subject;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await subject.cleanup();
  });

  const migrateTo = (migration: string) => migrate(subject.db, migration);

  /** A database at 0003 with keys in two organizations, a quarter of them in the default workspace. */
  async function legacyDatabase(): Promise<LegacyKeyRow[]> {
    subject = await open();
    await migrateTo(BEFORE_DEFAULT_WORKSPACES);
    await sql`insert into organizations (id, name, created_at) values (${OTHER_ORGANIZATION}, 'other', 1)`.execute(
      subject.db,
    );
    return [
      ...(await insertLegacyKeys(subject.db, DEFAULT_ORGANIZATION.id, 40)),
      ...(await insertLegacyKeys(subject.db, OTHER_ORGANIZATION, 20)),
    ];
  }

  async function openedStore(): Promise<Store> {
    store = (await openStore(subject.location)).store;
    return store;
  }

  const defaultWorkspaces = async () =>
    Object.fromEntries(
      (
        await sql<{ id: string; default_workspace_id: string }>`select id, default_workspace_id
          from organizations`.execute(subject.db)
      ).rows.map((row) => [row.id, row.default_workspace_id]),
    );

  const workspacesOfKeys = async () =>
    Object.fromEntries(
      (
        await sql<{ id: string; workspace_id: string | null }>`select id, workspace_id from api_keys`.execute(
          subject.db,
        )
      ).rows.map((row) => [row.id, row.workspace_id]),
    );

  it('gives each organization a default workspace ID of its own, and leaves every key in its workspace', async () => {
    const legacy = await legacyDatabase();
    const fileBefore = await subject.tableFile('api_keys');

    await migrateTo('latest');
    const defaults = await defaultWorkspaces();
    const workspaces = await workspacesOfKeys();
    const scopes = (
      await sql<{ scope: string; keys: number | string }>`select scope, count(*) as keys from api_keys
        group by scope`.execute(subject.db)
    ).rows.map((row) => [row.scope, Number(row.keys)]);

    expect(Object.keys(defaults).sort()).toEqual([DEFAULT_ORGANIZATION.id, OTHER_ORGANIZATION]);
    expect(Object.values(defaults).every((id) => WORKSPACE_ID.test(id))).toBe(true);
    expect(defaults[DEFAULT_ORGANIZATION.id]).not.toBe(defaults[OTHER_ORGANIZATION]);
    expect(legacy.filter((row) => row.workspace_id === null)).toHaveLength(10 + 5);
    // The keys of the default workspace keep null: the migration rewrites no key.
    for (const row of legacy) {
      expect(workspaces[row.id]).toBe(row.workspace_id);
    }
    expect(scopes).toEqual([['workspace', legacy.length]]);
    // Nor does PostgreSQL rewrite the table to add the columns.
    expect(await subject.tableFile('api_keys')).toBe(fileBefore);
  });

  it('leaves keys the store lists as before: no expiry, no principal, in their workspace', async () => {
    const legacy = await legacyDatabase();
    await migrateTo('latest');
    const opened = await openedStore();

    const inDefault = await opened.listApiKeys({
      organizationId: DEFAULT_ORGANIZATION.id,
      limit: 100,
      filters: { workspaceId: null },
    });
    const all = await opened.listApiKeys({ organizationId: DEFAULT_ORGANIZATION.id, limit: 100 });

    const expected = legacy
      .filter((row) => row.organization_id === DEFAULT_ORGANIZATION.id && row.workspace_id === null)
      .map((row) => row.id)
      .reverse();
    expect(inDefault.kind === 'page' && inDefault.keys.map((key) => key.id)).toEqual(expected);
    expect(all.kind === 'page' && all.keys).toHaveLength(40);
    for (const key of all.kind === 'page' ? all.keys : []) {
      const row = legacy.find((legacyRow) => legacyRow.id === key.id);
      expect(key).toMatchObject({
        workspaceId: row?.workspace_id,
        expiresAt: null,
        principal: null,
        scope: 'workspace',
      });
    }
  });

  it('makes the database refuse what the contract forbids', async () => {
    await legacyDatabase();
    await migrateTo('latest');
    const defaults = await defaultWorkspaces();
    const insertKey = (columns: Record<string, unknown>) =>
      sql`insert into api_keys (id, organization_id, name, workspace_id, created_at, created_by_id, created_by_type,
          partial_key_hint, secret_hash, status, updated_at, expires_at, principal_type, principal_id, scope)
        values (${columns.id}, ${DEFAULT_ORGANIZATION.id}, 'raw', ${columns.workspace_id ?? null}, 1, 'user_raw',
          'user', null, ${columns.id}, 'active', 1, null, ${columns.principal_type ?? null},
          ${columns.principal_id ?? null}, ${'scope' in columns ? columns.scope : 'workspace'})`.execute(subject.db);
    const alice = { principal_type: 'user', principal_id: 'user_alice' };
    const insertOrganization = (id: string, defaultWorkspaceId: string | null) =>
      sql`insert into organizations (id, name, created_at, default_workspace_id)
        values (${id}, 'raw', 1, ${defaultWorkspaceId})`.execute(subject.db);

    await expect(insertKey({ id: 'apikey_scope', scope: 'organization' })).rejects.toThrow(
      /api_keys_organization_scope_check/,
    );
    await expect(
      insertKey({ id: 'apikey_scope2', scope: 'organization', workspace_id: 'wrkspc_1', ...alice }),
    ).rejects.toThrow(/api_keys_organization_scope_check/);
    await expect(insertKey({ id: 'apikey_scope3', scope: 'team', ...alice })).rejects.toThrow(/api_keys_scope_check/);
    await expect(insertKey({ id: 'apikey_scope4', scope: null })).rejects.toThrow(/null|NOT NULL/i);
    await expect(
      insertKey({ id: 'apikey_type', workspace_id: 'wrkspc_1', principal_type: 'robot', principal_id: 'robot_1' }),
    ).rejects.toThrow(/api_keys_principal_type_check/);
    await expect(insertKey({ id: 'apikey_half', workspace_id: 'wrkspc_1', principal_type: 'user' })).rejects.toThrow(
      /api_keys_principal_check/,
    );
    await expect(insertKey({ id: 'apikey_half2', workspace_id: 'wrkspc_1', principal_id: 'user_1' })).rejects.toThrow(
      /api_keys_principal_check/,
    );
    await expect(insertOrganization('org_none', null)).rejects.toThrow(/null|NOT NULL/i);
    await expect(insertOrganization('org_same', defaults[OTHER_ORGANIZATION] ?? '')).rejects.toThrow(/unique/i);
    // The default workspace (workspace_id null), with or without a principal; organization scope with one.
    await insertKey({ id: 'apikey_default', workspace_id: null });
    await insertKey({ id: 'apikey_default_bound', workspace_id: null, ...alice });
    await insertKey({ id: 'apikey_org_scope', workspace_id: null, scope: 'organization', ...alice });
    await expect(
      sql`update api_keys set organization_id = 'org_missing' where id = 'apikey_org_scope'`.execute(subject.db),
    ).rejects.toThrow(/foreign key/i);
  });

  it('down restores 0003: every key of the default workspace has null, expired keys become inactive', async () => {
    const legacy = await legacyDatabase();
    const [expiring, expired] = legacy.filter(
      (row) => row.organization_id === DEFAULT_ORGANIZATION.id && row.status === 'active',
    );
    await migrateTo('latest');
    const opened = await openedStore();
    const now = Date.now() * 1000;
    await opened.updateApiKey(DEFAULT_ORGANIZATION.id, expiring?.id ?? '', { expiresAt: now + 3_600_000_000 });
    await opened.updateApiKey(DEFAULT_ORGANIZATION.id, expired?.id ?? '', { expiresAt: now - 1 });
    const { apiKey: organizationScope } = await opened.createApiKey({
      organizationId: OTHER_ORGANIZATION,
      name: 'organization scope',
      scope: 'organization',
      principal: { type: 'user', id: 'user_alice' },
      createdBy: { type: 'user', id: 'user_alice' },
    });
    // A caller that did not map the default workspace's ID to null (the store takes it as given).
    const { apiKey: withDefaultId } = await opened.createApiKey({
      organizationId: OTHER_ORGANIZATION,
      name: 'default workspace ID',
      workspaceId: (await defaultWorkspaces())[OTHER_ORGANIZATION],
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await opened.close();
    store = undefined;

    await migrateTo(BEFORE_DEFAULT_WORKSPACES);
    const workspaces = await workspacesOfKeys();
    const statuses = Object.fromEntries(
      (await sql<{ id: string; status: string }>`select id, status from api_keys`.execute(subject.db)).rows.map(
        (row) => [row.id, row.status],
      ),
    );

    expect(await subject.columns('organizations')).toEqual(['id', 'name', 'created_at']);
    expect(await subject.columns('api_keys')).not.toContain('expires_at');
    expect(await subject.columns('api_keys')).not.toContain('principal_id');
    expect(await subject.columns('api_keys')).not.toContain('scope');
    for (const row of legacy) {
      expect(workspaces[row.id]).toBe(row.workspace_id);
    }
    expect(workspaces[organizationScope.id]).toBeNull();
    expect(workspaces[withDefaultId.id]).toBeNull();
    expect([statuses[expiring?.id ?? ''], statuses[expired?.id ?? '']]).toEqual(['active', 'inactive']);
    await migrateTo('latest');
  });
});

const BEFORE_AUDIT_EVENTS = '0004-expiry-principals-default-workspaces';

const AUDIT_EVENTS = '0005-audit-events';
/** The columns of audit_events as 0005 made them (0010 added the permissions and metadata before and after). */
const AUDIT_EVENT_COLUMNS_OF_0005 = AUDIT_EVENTS_TABLE_COLUMNS.filter(
  (column) => !/^(permissions|metadata)_(before|after)$/.test(column),
);

describe.each(ENGINES)('0005 on $engine', ({ open }) => {
  let subject: Subject;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await subject.cleanup();
  });

  const migrateTo = (migration: string) => migrate(subject.db, migration);

  /** A database at 0004 with two organizations, an admin key, and keys with and without expiry and principal. */
  async function databaseBeforeAuditEvents(): Promise<LegacyKeyRow[]> {
    subject = await open();
    await migrateTo(BEFORE_AUDIT_EVENTS);
    await sql`insert into organizations (id, name, created_at, default_workspace_id)
      values (${OTHER_ORGANIZATION}, 'other', 1, 'wrkspc_other000000000000000000')`.execute(subject.db);
    await sql`insert into admin_keys (id, organization_id, name, secret_hash, partial_key_hint, status, created_at)
      values ('adminkey_before_audit', ${OTHER_ORGANIZATION}, 'ops', 'hash_before_audit', 'sk-adm-abcd...wxyz',
        'disabled', 2)`.execute(subject.db);
    const legacy = [
      ...(await insertLegacyKeys(subject.db, DEFAULT_ORGANIZATION.id, 30)),
      ...(await insertLegacyKeys(subject.db, OTHER_ORGANIZATION, 10)),
    ];
    await sql`update api_keys set expires_at = 1900000000000000, principal_type = 'user', principal_id = 'user_seed1'
      where id = ${legacy[1]?.id ?? ''}`.execute(subject.db);
    return legacy;
  }

  async function openedStore(): Promise<Store> {
    store = (await openStore(subject.location)).store;
    return store;
  }

  /** Every row of the tables 0004 has, as the database returns them. */
  const rowsBefore0005 = async () =>
    Object.fromEntries(
      await Promise.all(
        ['organizations', 'admin_keys', 'api_keys'].map(async (table) => [
          table,
          (await sql`select * from ${sql.table(table)} order by id`.execute(subject.db)).rows,
        ]),
      ),
    );

  const auditEventCount = async () =>
    Number(
      (await sql<{ events: number | string }>`select count(*) as events from audit_events`.execute(subject.db)).rows[0]
        ?.events,
    );

  it('adds the empty audit_events table and changes no row of the other tables', async () => {
    await databaseBeforeAuditEvents();
    const rows = await rowsBefore0005();
    const fileBefore = await subject.tableFile('api_keys');

    expect(await subject.columns('audit_events')).toEqual([]);
    await migrateTo(AUDIT_EVENTS);

    expect(await subject.columns('audit_events')).toEqual(AUDIT_EVENT_COLUMNS_OF_0005);
    expect(await auditEventCount()).toBe(0);
    expect(await rowsBefore0005()).toEqual(rows);
    expect(await subject.tableFile('api_keys')).toBe(fileBefore);
  });

  it('leaves a store that lists the keys as before, an empty trail, and records the next change', async () => {
    const legacy = await databaseBeforeAuditEvents();
    await migrateTo('latest');
    const opened = await openedStore();
    const [first] = legacy;

    const keys = await opened.listApiKeys({ organizationId: DEFAULT_ORGANIZATION.id, limit: 100 });
    const trailBefore = await opened.listAuditEvents({ organizationId: DEFAULT_ORGANIZATION.id, limit: 100 });
    await opened.updateApiKey(DEFAULT_ORGANIZATION.id, first?.id ?? '', { name: 'renamed after 0005' });
    const trailAfter = await opened.listAuditEvents({ organizationId: DEFAULT_ORGANIZATION.id, limit: 100 });

    expect(keys.kind === 'page' && keys.keys.map((key) => key.id)).toEqual(
      legacy
        .filter((row) => row.organization_id === DEFAULT_ORGANIZATION.id)
        .map((row) => row.id)
        .reverse(),
    );
    expect(trailBefore).toEqual({ kind: 'page', events: [], hasMore: false });
    expect(
      trailAfter.kind === 'page' && trailAfter.events.map((event) => [event.type, event.target, event.changes]),
    ).toEqual([
      [
        'api_key.updated',
        { type: 'api_key', id: first?.id },
        { name: { from: first?.name, to: 'renamed after 0005' } },
      ],
    ]);
  });

  it('down drops the trail and leaves the other tables as they were; up again adds it empty', async () => {
    await databaseBeforeAuditEvents();
    await migrateTo('latest');
    const opened = await openedStore();
    await opened.createApiKey({
      organizationId: OTHER_ORGANIZATION,
      name: 'made after 0005',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await opened.close();
    store = undefined;

    await migrateTo(AUDIT_EVENTS);
    const rows = await rowsBefore0005();
    await migrateTo(BEFORE_AUDIT_EVENTS);
    const columnsAfterDown = await subject.columns('audit_events');
    const rowsAfterDown = await rowsBefore0005();
    await migrateTo('latest');

    expect(columnsAfterDown).toEqual([]);
    expect(rowsAfterDown).toEqual(rows);
    expect(await subject.columns('audit_events')).toEqual(AUDIT_EVENTS_TABLE_COLUMNS);
    expect(await auditEventCount()).toBe(0);
  });
});

describe.runIf(engines.includes(POSTGRES))('0006 on PostgreSQL', () => {
  let subject: Subject;
  let store: Store | undefined;
  let holder: pg.Client | undefined;

  afterEach(async () => {
    await holder?.end();
    holder = undefined;
    await store?.close();
    store = undefined;
    await subject.cleanup();
  });

  const migrateTo = (migration: string) => migrate(subject.db, migration);

  /** Holds the organization's row FOR UPDATE in a transaction of another connection, until the test ends. */
  async function lockOrganization(organizationId: string): Promise<void> {
    if (subject.location.kind !== 'postgres') {
      throw new Error('a PostgreSQL subject has a URL');
    }
    holder = new pg.Client({ connectionString: subject.location.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select id from organizations where id = $1 for update', [organizationId]);
  }

  const foreignKeys = async () =>
    (
      await sql<{ name: string }>`select conname as name from pg_constraint
        where conrelid = 'audit_events'::regclass and contype = 'f'`.execute(subject.db)
    ).rows.map((row) => row.name);

  it('records a change while another transaction holds its organization FOR UPDATE', async () => {
    subject = await postgresSubject();
    await migrateTo('latest');
    store = (await openStore(subject.location)).store;
    const key = await store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'before the lock',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await lockOrganization(DEFAULT_ORGANIZATION.id);

    // With the foreign key of 0005, the event's check (FOR KEY SHARE of the organization) waited for the holder.
    const waited = Symbol('waited for the organization');
    const updated = await Promise.race([
      store.updateApiKey(DEFAULT_ORGANIZATION.id, key.apiKey.id, { name: 'while the organization is locked' }),
      new Promise((resolve) => setTimeout(() => resolve(waited), 2_000)),
    ]);
    const trail = await store.listAuditEvents({ organizationId: DEFAULT_ORGANIZATION.id, limit: 10 });

    expect(updated).toMatchObject({ name: 'while the organization is locked' });
    expect(trail.kind === 'page' && trail.events.map((event) => event.type)).toEqual([
      'api_key.updated',
      'api_key.created',
    ]);
  });

  it('down restores the foreign key over the events recorded without it; up drops it again', async () => {
    subject = await postgresSubject();
    await migrateTo('latest');
    store = (await openStore(subject.location)).store;
    await store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'recorded without the foreign key',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await store.close();
    store = undefined;
    const keyless = await foreignKeys();

    await migrateTo('0005-audit-events');
    const restored = await foreignKeys();
    await migrateTo('latest');

    expect(keyless).toEqual([]);
    expect(restored).toEqual(['audit_events_organization_id_fkey']);
    expect(await foreignKeys()).toEqual([]);
  });
});

const BEFORE_EXPIRY_RANGE = '0008-api-key-usage';
const EXPIRY_RANGE = '0009-expiries-within-range';
/** 2199-12-31T23:59:59.999999Z: the latest expiry the API accepts, in microseconds. */
const LATEST_EXPIRY_MICROS = 7_258_118_399_999_999;
/** What `9999-12-31T23:59:59.999999Z` became in a number, and so in the database, before the range existed. */
const YEAR_9999 = 253_402_300_800_000_000;

describe.each(ENGINES)('0009 on $engine', ({ open }) => {
  let subject: Subject;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await subject.cleanup();
  });

  const migrateTo = (migration: string) => migrate(subject.db, migration);

  const rowsOf = async (table: string) =>
    (await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by id`.execute(subject.db)).rows;

  it('brings expiries past the range, in keys and in audit events, to the latest one; nothing else changes', async () => {
    subject = await open();
    // The store's code writes the columns of later migrations: the keys are made at the latest one, which is then
    // undone down to the one before the range.
    await migrateTo('latest');
    store = (await openStore(subject.location)).store;
    const organizationId = DEFAULT_ORGANIZATION.id;
    const createdBy = { type: 'user', id: 'user_alice' } as const;
    // As the code before the range stored them: a create and an update past it, and keys within it.
    const far = await store.createApiKey({ organizationId, name: 'year 9999', createdBy, expiresAt: YEAR_9999 });
    const within = await store.createApiKey({
      organizationId,
      name: 'latest',
      createdBy,
      expiresAt: LATEST_EXPIRY_MICROS,
    });
    const never = await store.createApiKey({ organizationId, name: 'never', createdBy });
    await store.updateApiKey(organizationId, never.apiKey.id, { expiresAt: LATEST_EXPIRY_MICROS + 1 });
    await store.updateApiKey(organizationId, never.apiKey.id, { expiresAt: null });
    await store.close();
    store = undefined;
    await migrateTo(BEFORE_EXPIRY_RANGE);
    const keysBefore = await rowsOf('api_keys');
    const eventsBefore = await rowsOf('audit_events');

    await migrateTo(EXPIRY_RANGE);

    const clamp = (value: unknown) =>
      value !== null && Number(value) > LATEST_EXPIRY_MICROS
        ? LATEST_EXPIRY_MICROS
        : value === null
          ? null
          : Number(value);
    const normalize = (rows: Record<string, unknown>[], columns: string[]) =>
      rows.map((row) => ({ ...row, ...Object.fromEntries(columns.map((column) => [column, clamp(row[column])])) }));
    expect(normalize(await rowsOf('api_keys'), ['expires_at'])).toEqual(normalize(keysBefore, ['expires_at']));
    expect(normalize(await rowsOf('audit_events'), ['expires_at_before', 'expires_at_after'])).toEqual(
      normalize(eventsBefore, ['expires_at_before', 'expires_at_after']),
    );
    await migrateTo('latest');
    store = (await openStore(subject.location)).store;
    expect(await store.getApiKey(organizationId, far.apiKey.id)).toMatchObject({ expiresAt: LATEST_EXPIRY_MICROS });
    expect(await store.getApiKey(organizationId, within.apiKey.id)).toMatchObject({ expiresAt: LATEST_EXPIRY_MICROS });
    const trail = await store.listAuditEvents({ organizationId, limit: 100, filters: { targetId: never.apiKey.id } });
    expect(trail.kind === 'page' && trail.events.map((event) => event.changes.expiresAt)).toEqual([
      { from: LATEST_EXPIRY_MICROS, to: null },
      { from: null, to: LATEST_EXPIRY_MICROS },
      undefined,
    ]);
    // The trail is immutable again.
    await expect(sql`update audit_events set name_after = 'changed'`.execute(subject.db)).rejects.toThrow(
      /audit events are immutable/,
    );
  });
});
