import { spawn } from 'node:child_process';
import { readdir, readlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { namesGranting } from '@apikeys/permissions';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/migrations/index.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { seedApiKeys } from '../src/seeding/index.js';
import { configureConnection, openSqliteStore } from '../src/sqlite/open-sqlite-store.js';
import type { ApiKeyFilters, PageCursor, Store } from '../src/types.js';
import { explainSqlite } from '../testing/query-plans.js';
import { listPage } from './conformance.js';
import { tempDatabasePath } from './engine-stores.js';
import { insertLegacyKeys } from './legacy-keys.js';
import { CURSOR_SHAPES, FILTER_SHAPES, ROW_CHECKED_STATUS_SHAPES } from './list-query-shapes.js';

const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

describe('SQLite durability', () => {
  let path: string;
  let removeDir: () => Promise<void>;

  beforeAll(async () => {
    ({ path, removeDir } = await tempDatabasePath());
  });

  afterAll(async () => {
    await removeDir();
  });

  it('an update is still there after closing and reopening the file', async () => {
    const { store: first, migrator } = openSqliteStore(path);
    await migrator.migrateToLatest();
    const organizationId = (await first.createOrganization('durable')).id;
    const { apiKey } = await first.createApiKey({
      organizationId,
      name: 'before',
      createdBy: { id: 'user_alice', type: 'user' },
    });
    await first.updateApiKey(organizationId, apiKey.id, { name: 'after', status: 'archived' });
    await first.close();

    const reopened = openSqliteStore(path);
    const fetched = await reopened.store.getApiKey(organizationId, apiKey.id);
    const migrations = await reopened.migrator.migrateToLatest();
    await reopened.store.close();

    expect(fetched).toEqual({ ...apiKey, name: 'after', status: 'archived' });
    expect(migrations).toEqual([]);
  });

  it('the file is in WAL mode', () => {
    const database = new Database(path, { readonly: true });
    try {
      expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      database.close();
    }
  });

  it('an acknowledged update survives the process being killed without closing the store', async () => {
    const { store } = openSqliteStore(path);
    const organizationId = (await store.createOrganization('killed')).id;
    const { apiKey } = await store.createApiKey({
      organizationId,
      name: 'before',
      createdBy: { id: 'user_alice', type: 'user' },
    });
    await store.close();

    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(PACKAGE_DIR, 'test/fixtures/update-then-hang.ts'),
        path,
        organizationId,
        apiKey.id,
        'after',
      ],
      { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const output = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) {
          child.kill('SIGKILL');
        }
      });
      child.on('error', reject);
      child.on('exit', (_, signal) =>
        signal === 'SIGKILL' ? resolve(text) : reject(new Error(`child exited: ${text}`)),
      );
    });
    const { store: reopened } = openSqliteStore(path);
    const fetched = await reopened.getApiKey(organizationId, apiKey.id);
    await reopened.close();

    expect(output).toBe('updated\n');
    expect(fetched?.name).toBe('after');
  });
});

describe('SQLite savepoints', () => {
  /** The temporary files SQLite has open in this process (it unlinks them at once, so only /proc/self/fd shows them). */
  const openTemporaryFiles = async () => {
    const links = await Promise.all(
      (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
    );
    return links.filter((link) => /etilqs_/.test(link));
  };

  it('keep their sub-journal in memory, never in a temporary file, however many pages a savepoint changes', async () => {
    const { path, removeDir } = await tempDatabasePath();
    const database = new Database(path);
    try {
      configureConnection(database);
      database.exec('create table pages (id integer primary key, filler text)');
      const insert = database.prepare('insert into pages (filler) values (?)');
      database.transaction(() => {
        for (let row = 0; row < 2_000; row++) {
          insert.run('x'.repeat(1_000));
        }
      })();

      // Group commit's shape: a transaction, and each write in a savepoint; this one changes about 2 MB of pages,
      // far past the 64 KiB SQLite keeps in memory unless told to keep all of it there.
      database.exec("begin immediate; savepoint write; update pages set filler = 'y' || filler");
      const whileWriting = await openTemporaryFiles();
      database.exec('release write; commit');

      expect(whileWriting).toEqual([]);
    } finally {
      database.close();
      await removeDir();
    }
  });
});

describe('SQLite group commit', () => {
  let path: string;
  let removeDir: () => Promise<void>;
  let store: Store;
  let side: Database.Database;
  let organizationId: string;
  let ids: string[];

  beforeAll(async () => {
    ({ path, removeDir } = await tempDatabasePath());
    const opened = openSqliteStore(path);
    store = opened.store;
    await opened.migrator.migrateToLatest();
    organizationId = (await store.createOrganization('group commit')).id;
    await seedApiKeys(store, { organizationId, count: 200, workspaces: 2, users: 2, seed: 3, lifecycle: true });
    ids = (await listPage(store, { organizationId, limit: 200 })).keys.map((key) => key.id);
    side = new Database(path);
  });

  afterAll(async () => {
    side?.close();
    await store?.close();
    await removeDir?.();
  });

  /** What another connection reads from the file: the names of these keys. */
  const namesOnDisk = (keyIds: readonly string[]) =>
    keyIds.map((id) => side.prepare('select name from api_keys where id = ?').pluck().get(id));

  /** Empties the write-ahead log, runs `work`, and returns the number of WAL frames it wrote (its pages written). */
  async function walFramesOf(work: () => Promise<unknown>): Promise<number> {
    side.pragma('wal_checkpoint(TRUNCATE)');
    await work();
    const [{ log }] = side.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
    return log;
  }

  it('updates issued together each resolve with their own key, and all of them are on disk', async () => {
    const keyIds = ids.slice(0, 50);
    const updated = await Promise.all(
      keyIds.map((id, i) => store.updateApiKey(organizationId, id, { name: `together ${i}` })),
    );

    expect(updated.map((key) => [key?.id, key?.name])).toEqual(keyIds.map((id, i) => [id, `together ${i}`]));
    expect(namesOnDisk(keyIds)).toEqual(keyIds.map((_, i) => `together ${i}`));
  });

  it('updates issued together are written in one transaction, not one commit each', async () => {
    const [id = ''] = ids;
    const oneByOne = await walFramesOf(async () => {
      for (let i = 0; i < 20; i++) {
        await store.updateApiKey(organizationId, id, { name: `one by one ${i}` });
      }
    });
    const twenty = await walFramesOf(() =>
      Promise.all(Array.from({ length: 20 }, (_, i) => store.updateApiKey(organizationId, id, { name: `hot ${i}` }))),
    );

    expect(twenty).toBeGreaterThan(0);
    // One commit per update writes the key's pages (and the audit trail's last pages) once per update: measured here,
    // twenty updates one by one write about ten times the frames of twenty issued together.
    expect(twenty).toBeLessThan(oneByOne / 4);
    expect(namesOnDisk([id])).toEqual(['hot 19']);
  });

  it('an update that fails fails alone: the others issued with it commit', async () => {
    const [first = '', second = '', third = ''] = ids.slice(60, 63);
    const outcomes = await Promise.allSettled([
      store.updateApiKey(organizationId, first, { name: 'kept 1' }),
      // The status CHECK constraint refuses it (the API validates statuses before they reach the store).
      store.updateApiKey(organizationId, second, { name: 'refused', status: 'bogus' as never }),
      store.updateApiKey(organizationId, third, { name: 'kept 3' }),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/CHECK constraint failed/);
    expect(namesOnDisk([first, second, third])).toEqual(['kept 1', expect.not.stringMatching('refused'), 'kept 3']);
  });
});

const INDEX_EQUALITIES: Record<string, string> = {
  api_keys_org_created_covering_idx: 'organization_id=?',
  api_keys_org_status_created_covering_idx: 'organization_id=? AND status=?',
  api_keys_org_workspace_created_covering_idx: 'organization_id=? AND workspace_id=?',
  api_keys_org_creator_created_covering_idx: 'organization_id=? AND created_by_type=? AND created_by_id=?',
  api_keys_org_expiring_created_covering_idx: 'organization_id=?',
};
// A list page's search of a list index: for a version that shows no permissions and no metadata, of the index alone
// (covering); with them, each of the page's keys is then read from its row (by its rowid, which the index holds).
const PLAN_STEP = /^SEARCH api_keys USING (COVERING )?INDEX (\w+) \((.*)\)$/;

describe.each([
  ['without statistics', false],
  ['after ANALYZE', true],
])('SQLite query plans %s', (_, analyze) => {
  let path: string;
  let removeDir: () => Promise<void>;
  let store: Store;
  let explainer: Database.Database;
  let organizationId: string;
  let cursorId: string;
  const queries: { sql: string; parameters: readonly unknown[] }[] = [];

  beforeAll(async () => {
    ({ path, removeDir } = await tempDatabasePath());
    const opened = openSqliteStore(path, { onQuery: (sql, parameters) => queries.push({ sql, parameters }) });
    store = opened.store;
    await opened.migrator.migrateToLatest();
    organizationId = (await store.createOrganization('plans')).id;
    await seedApiKeys(store, { organizationId, count: 3000, workspaces: 3, users: 4, seed: 1, lifecycle: true });
    await seedApiKeys(store, {
      organizationId: DEFAULT_ORGANIZATION.id,
      count: 1000,
      workspaces: 3,
      users: 4,
      seed: 2,
      lifecycle: true,
    });
    const page = await listPage(store, { organizationId, limit: 1500 });
    cursorId = page.keys.at(-1)?.id ?? '';
    explainer = new Database(path);
    if (analyze) {
      explainer.exec('analyze');
    }
  });

  afterAll(async () => {
    explainer?.close();
    await store?.close();
    await removeDir?.();
  });

  /** Runs one list call and returns the query plan steps of every query it made. */
  async function plansOf(filters: ApiKeyFilters, cursorShape: (typeof CURSOR_SHAPES)[number], attributes: boolean) {
    const cursor: PageCursor | undefined =
      cursorShape === 'no cursor' ? undefined : { direction: cursorShape, id: cursorId };
    queries.length = 0;
    const page = await listPage(store, { organizationId, limit: 20, cursor, filters, attributes });
    expect(page.keys.length).toBeGreaterThan(0);
    return queries.map(({ sql, parameters }) => ({ sql, steps: explainSqlite(explainer, sql, parameters) }));
  }

  // SQLite checks every filter in the covering index, so the status sets PostgreSQL checks on rows are no different.
  describe.each([...FILTER_SHAPES, ...ROW_CHECKED_STATUS_SHAPES])('listing with %s', (_, filters, expectedIndex) => {
    describe.each([
      ['with permissions and metadata', true],
      ['without them', false],
    ])('%s', (_, attributes) => {
      it.each(CURSOR_SHAPES)('and %s is one index range search of the organization, without sorting', async (shape) => {
        const plans = await plansOf(filters, shape, attributes);

        expect(plans).toHaveLength(shape === 'no cursor' ? 1 : 2);
        for (const { steps } of plans) {
          expect(steps.join('\n')).not.toMatch(/TEMP B-TREE|^SCAN/m);
        }
        // After the page's one search, each of its keys has its use read by the primary key of api_key_usage; no
        // other table is read, and no key twice.
        expect(plans.at(-1)?.steps.slice(1)).toEqual([
          expect.stringMatching(/^CORRELATED SCALAR SUBQUERY \d+$/),
          expect.stringMatching(/^SEARCH u USING PRIMARY KEY \(api_key_id=\?\)$/),
        ]);
        // The order is asked for in full, not left to whichever index the planner happens to read.
        const order = shape === 'before' ? 'asc' : 'desc';
        expect(plans.at(-1)?.sql).toMatch(new RegExp(`order by "created_at" ${order}, "id" ${order} limit \\?$`));
        const listStep = plans.at(-1)?.steps[0] ?? '';
        const [, covering, index = '', constraint = ''] = listStep.match(PLAN_STEP) ?? [];
        expect(listStep).toMatch(PLAN_STEP);
        expect(covering === 'COVERING ').toBe(!attributes);
        expect(index).toMatch(expectedIndex);
        // Every equality column of the index is used, and the cursor bounds the range on (created_at, id).
        const equalities = INDEX_EQUALITIES[index] ?? 'an unexpected index';
        const range = { 'no cursor': '', after: ' AND (created_at,id)<(?,?)', before: ' AND (created_at,id)>(?,?)' }[
          shape
        ];
        expect(constraint).toBe(`${equalities}${range}`);
        if (shape !== 'no cursor') {
          // The cursor's own row is found by primary key, not by scanning.
          expect(plans[0]?.steps).toEqual([
            expect.stringMatching(/^SEARCH api_keys USING (?:COVERING )?INDEX \w+ \(id=\?\)$/),
          ]);
        }
      });
    });
  });

  // `documents.drafts.write` is granted by four names: four branches, each read in page order from the permission
  // index; then only the candidates' keys are read, each by its ID.
  describe.each<[string, ApiKeyFilters]>([
    ['a permission', { permission: 'documents.drafts.write' }],
    ['a permission and a status', { permission: 'documents.read', status: 'active' }],
    ['a permission and a workspace', { permission: 'billing.read', workspaceId: 'wrkspc_seed1' }],
  ])('listing with %s', (_, filters) => {
    it.each(CURSOR_SHAPES)('and %s reads the permission index, then keys by ID only, never all keys', async (shape) => {
      const plans = await plansOf(filters, shape, true);
      const steps = plans.at(-1)?.steps ?? [];

      const keyReads = steps.filter((step) => /^(SEARCH|SCAN) api_keys\b/.test(step));
      expect(keyReads.length).toBeGreaterThan(0);
      for (const step of keyReads) {
        expect(step).toMatch(/^SEARCH api_keys USING INDEX sqlite_autoindex_api_keys_1 \(id=\?\)$/);
      }
      const grantReads = steps.filter((step) => /api_key_permissions/.test(step));
      expect(grantReads.length).toBe(namesGranting(filters.permission ?? '').length);
      for (const step of grantReads) {
        expect(step).toMatch(/^SEARCH api_key_permissions USING PRIMARY KEY \(organization_id=\? AND permission=\?/);
      }
      expect(steps.join('\n')).not.toMatch(/AUTOMATIC|^SCAN (api_keys|api_key_permissions)/m);
      if (Object.keys(filters).length === 1) {
        // With no other filter, the branches read positions only, and the page reads its own keys: one read of keys,
        // after the page's positions.
        expect(keyReads).toHaveLength(1);
        expect(steps.indexOf(keyReads[0] ?? '')).toBe(steps.indexOf('SCAN page_keys') + 1);
      }
    });
  });
});

describe('SQLite list index migration', () => {
  it('0002 and 0004 replace the list indexes of a database with keys, and each down restores them', async () => {
    const { path, removeDir } = await tempDatabasePath();
    const database = new Database(path);
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
    const migrator = new Migrator({ db, provider: migrationProvider });
    const indexes = () =>
      database
        .prepare("select name, sql from sqlite_master where type = 'index' and tbl_name = 'api_keys' order by name")
        .all() as { name: string; sql: string | null }[];
    const listIndexes = () => indexes().filter((index) => index.name.startsWith('api_keys_org_'));
    const { store } = openSqliteStore(path);
    try {
      expect((await migrator.migrateTo('0001-initial')).error).toBeUndefined();
      const initial = indexes();
      const legacy = await insertLegacyKeys(db, DEFAULT_ORGANIZATION.id, 500);
      expect((await migrator.migrateTo('0003-postgres-list-indexes')).error).toBeUndefined();
      const covering = indexes();
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const latest = listIndexes();
      const page = await store.listApiKeys({
        organizationId: DEFAULT_ORGANIZATION.id,
        limit: 50,
        filters: { status: 'active' },
      });
      expect((await migrator.migrateTo('0003-postgres-list-indexes')).error).toBeUndefined();
      const coveringAgain = indexes();
      expect((await migrator.migrateTo('0001-initial')).error).toBeUndefined();

      expect(covering.map((index) => index.name).filter((name) => name.startsWith('api_keys_org_'))).toEqual([
        'api_keys_org_created_covering_idx',
        'api_keys_org_creator_created_covering_idx',
        'api_keys_org_status_created_covering_idx',
        'api_keys_org_workspace_created_covering_idx',
      ]);
      expect(latest.map((index) => index.name)).toEqual([
        'api_keys_org_created_covering_idx',
        'api_keys_org_creator_created_covering_idx',
        'api_keys_org_expiring_created_covering_idx',
        'api_keys_org_status_created_covering_idx',
        'api_keys_org_workspace_created_covering_idx',
      ]);
      // Every list index covers every column a page filters on or returns.
      for (const { sql } of latest) {
        for (const column of ['name', 'partial_key_hint', 'expires_at', 'principal_type', 'principal_id', 'scope']) {
          expect(sql).toContain(`"${column}"`);
        }
      }
      expect(latest.find((index) => index.name.includes('expiring'))?.sql).toMatch(
        /where expires_at is not null and status <> 'archived'$/,
      );
      expect(page.kind === 'page' && page.keys.map((key) => key.id)).toEqual(
        legacy
          .filter((row) => row.status === 'active')
          .map((row) => row.id)
          .reverse()
          .slice(0, 50),
      );
      expect(coveringAgain).toEqual(covering);
      expect(indexes()).toEqual(initial);
    } finally {
      await store.close();
      await db.destroy();
      await removeDir();
    }
  });
});
