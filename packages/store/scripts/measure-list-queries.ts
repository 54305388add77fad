/**
 * Measures every list query shape (each filter combination, the status sets among them, each cursor direction) at a
 * small and a large collection on the latest migration, and prints µs per list call and the large/small ratio.
 * Each size gets a freshly seeded database (the seed's mix of expiries and principals included), and seeding is
 * timed; the calls of one shape take turns between the databases, so that load from outside hits them alike.
 * Cursors are key IDs sampled uniformly over the collection, as in the benchmark suite. On PostgreSQL it also
 * explains each call's queries, for the buffers they read (which no outside load disturbs) and the server's
 * execution time. At the end it times the newest migration on the large database: down, then up again.
 *
 *   npx tsx scripts/measure-list-queries.ts [--engine sqlite|postgres|both] [--small 10000] [--large 1000000]
 *     [--rounds 5] [--queries 1000] [--clock wall|cpu] [--dir /tmp/apikeys-list-measure] [--filters expired,...]
 *
 * `--filters` names the filter shapes to measure (test/list-query-shapes.ts), all by default. `--clock cpu` counts
 * this process's CPU time instead of the wall clock: steadier on a busy machine, and the same thing for SQLite (in
 * process), but blind to the PostgreSQL server's work.
 *
 * The store runs on the latest schema only; the list indexes of earlier migrations were measured with earlier
 * versions of this script (docs/benchmarks.md).
 *
 * PostgreSQL runs on TEST_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres) in databases
 * named apikeys_idx_measure_*, dropped at the end. Its wall-clock times include planning: the store's named
 * statements are planned anew at each call until PostgreSQL settles on a generic plan, and it may do so at one
 * size and not at the other. SQLite files go to --dir and are deleted at the end.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrationProvider } from '../src/migrations/index.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { openPostgresStore } from '../src/postgres/open-postgres-store.js';
import { seedApiKeys } from '../src/seeding/index.js';
import { openSqliteStore } from '../src/sqlite/open-sqlite-store.js';
import type { ApiKeyFilters, PageCursor, Store } from '../src/types.js';
import { CURSOR_SHAPES, FILTER_SHAPES, ROW_CHECKED_STATUS_SHAPES } from '../test/list-query-shapes.js';
import { migrationNames } from '../testing/index.js';
import { databaseUrl, onPostgres } from '../testing/postgres.js';
import { TEST_POSTGRES_URL } from '../testing/postgres-available.js';
import { explainPostgres, explainSqlite, planNodes } from '../testing/query-plans.js';

type Engine = 'sqlite' | 'postgres';
type CursorShape = (typeof CURSOR_SHAPES)[number];

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    small: { type: 'string', default: '10000' },
    large: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
    clock: { type: 'string', default: 'wall' },
    queries: { type: 'string', default: '1000' },
    dir: { type: 'string', default: '/tmp/apikeys-list-measure' },
    filters: { type: 'string' },
  },
});

const ORGANIZATION_ID = DEFAULT_ORGANIZATION.id;
const SIZES = [Number(args.small), Number(args.large)] as const;
const ROUNDS = Number(args.rounds);
const QUERIES = Number(args.queries);
const WARMUP = Math.min(200, QUERIES);
const LIMIT = 20;
const ENGINES: Engine[] = args.engine === 'both' ? ['sqlite', 'postgres'] : [args.engine as Engine];
const CPU_CLOCK = args.clock === 'cpu';
const ALL_SHAPES = [...FILTER_SHAPES, ...ROW_CHECKED_STATUS_SHAPES];
const SHAPES = args.filters
  ? args.filters.split(',').map((name) => {
      const shape = ALL_SHAPES.find(([shapeName]) => shapeName === name.trim());
      if (!shape) {
        throw new Error(
          `no filter shape "${name}"; the shapes: ${ALL_SHAPES.map(([shapeName]) => shapeName).join(', ')}`,
        );
      }
      return shape;
    })
  : ALL_SHAPES;

function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function migrateTo(db: Kysely<unknown>, migration: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(migration);
  if (error) {
    throw error;
  }
}

/** Seconds it takes to undo the newest migration, and to apply it again. */
async function timeNewestMigration(db: Kysely<unknown>): Promise<{ down: number; up: number }> {
  const names = await migrationNames();
  const timed = async (migration: string) => {
    const started = performance.now();
    await migrateTo(db, migration);
    return (performance.now() - started) / 1000;
  };
  return { down: await timed(names.at(-2) ?? ''), up: await timed(names.at(-1) ?? '') };
}

/** The newest migration's name. */
async function newestMigration(): Promise<string> {
  return (await migrationNames()).at(-1) ?? '';
}

/** Buffers read and µs spent by the server. */
interface ServerWork {
  buffers: number;
  micros: number;
}

/** One seeded database of one engine and size. */
interface Measured {
  store: Store;
  seedSeconds: number;
  /** Undoes the newest migration and applies it again; returns the seconds each took. */
  remigrate(): Promise<{ down: number; up: number }>;
  /** Cursor IDs sampled uniformly over the collection, in random order. */
  cursorIds: string[];
  /** The plan of a query, reduced to the index (or indexes) it reads. */
  indexOf(sql: string, parameters: readonly unknown[]): Promise<string>;
  /**
   * What the server does for a query, by EXPLAIN (ANALYZE, BUFFERS): the buffers (8 KiB pages) it reads, hit or
   * not, and its execution time in µs. PostgreSQL only.
   */
  explain?(sql: string, parameters: readonly unknown[]): Promise<ServerWork>;
  drop(): Promise<void>;
}

/** The queries the store ran since this was last emptied, for EXPLAIN; kept short, as the timed calls land here too. */
const queriesRun: { sql: string; parameters: readonly unknown[] }[] = [];
const onQuery = (sql: string, parameters: readonly unknown[]) => {
  if (queriesRun.length < 10) {
    queriesRun.push({ sql, parameters });
  }
};

/** Seeds the default organization with `size` keys, as the benchmark suite does; returns the seconds it took. */
async function timeSeed(store: Store, size: number): Promise<number> {
  const started = performance.now();
  await seedApiKeys(store, {
    organizationId: ORGANIZATION_ID,
    count: size,
    workspaces: 3,
    users: 5,
    seed: 1,
    lifecycle: true,
  });
  return (performance.now() - started) / 1000;
}

async function openSqlite(size: number): Promise<Measured> {
  const path = join(args.dir, `latest-${size}.sqlite`);
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm']) {
      rmSync(`${path}${suffix}`, { force: true });
    }
  };
  remove();
  const { store } = openSqliteStore(path, { onQuery });
  const migrator = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(path) }) });
  await migrateTo(migrator, await newestMigration());
  const seedSeconds = await timeSeed(store, size);
  const side = new Database(path);
  const cursorIds = side
    .prepare('select id from api_keys where organization_id = ? order by random() limit ?')
    .pluck()
    .all(ORGANIZATION_ID, QUERIES) as string[];
  return {
    store,
    seedSeconds,
    cursorIds,
    remigrate: () => timeNewestMigration(migrator),
    async indexOf(sql, parameters) {
      return explainSqlite(side, sql, parameters)
        .map((step) => step.replace(/^SEARCH api_keys USING (COVERING )?INDEX /, ''))
        .join('; ');
    },
    async drop() {
      side.close();
      await migrator.destroy();
      await store.close();
      remove();
    },
  };
}

/** Runs one statement on the PostgreSQL server, outside the measured databases. */
async function onPostgresServer(sql: string): Promise<void> {
  await onPostgres(TEST_POSTGRES_URL, (client) => client.query(sql));
}

async function openPostgres(size: number): Promise<Measured> {
  const database = `apikeys_idx_measure_${size}`;
  await onPostgresServer(`drop database if exists ${database} with (force)`);
  await onPostgresServer(`create database ${database}`);
  const url = databaseUrl(TEST_POSTGRES_URL, database);
  const migrator = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  await migrateTo(migrator, await newestMigration());
  const { store } = openPostgresStore(url, { onQuery, poolSize: 1 });
  const seedSeconds = await timeSeed(store, size);
  const side = new pg.Client({ connectionString: url });
  await side.connect();
  // What autovacuum would have done by the time anyone lists; without statistics the plans are guesses.
  await side.query('vacuum analyze api_keys');
  const sampled = await side.query<{ id: string }>(
    'select id from api_keys where organization_id = $1 order by random() limit $2',
    [ORGANIZATION_ID, QUERIES],
  );
  return {
    store,
    seedSeconds,
    cursorIds: sampled.rows.map((row) => row.id),
    remigrate: () => timeNewestMigration(migrator),
    async indexOf(sql, parameters) {
      const { plan } = await explainPostgres(side, sql, parameters);
      return planNodes(plan)
        .map((node) =>
          node['Index Name']
            ? `${node['Node Type']} ${node['Index Name']}${node.Filter ? ` filter ${node.Filter}` : ''}`
            : node['Node Type'],
        )
        .join(' > ');
    },
    async explain(sql, parameters) {
      const { plan, executionMs = Number.NaN } = await explainPostgres(side, sql, parameters, ['analyze', 'buffers']);
      return {
        buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
        micros: executionMs * 1000,
      };
    },
    async drop() {
      await side.end();
      await migrator.destroy();
      await store.close();
      await onPostgresServer(`drop database if exists ${database} with (force)`);
    },
  };
}

/** The clock queries are timed by, in µs. */
function nowMicros(): number {
  if (CPU_CLOCK) {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
  return performance.now() * 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** A seeded database of one size. */
interface Subject {
  size: number;
  db: Measured;
}

/** Calls per slice: the subjects take turns slice by slice, so that load from outside hits all of them alike. */
const SLICE = 100;

/**
 * Median µs per list call of one shape for every subject. Each round makes `QUERIES` calls per subject, rotating
 * through its sampled cursors, in slices that alternate between the subjects.
 */
async function timeShape(subjects: Subject[], filters: ApiKeyFilters, shape: CursorShape): Promise<number[]> {
  const call = ({ db }: Subject, i: number) =>
    db.store.listApiKeys({
      organizationId: ORGANIZATION_ID,
      limit: LIMIT,
      filters,
      cursor: shape === 'no cursor' ? undefined : { direction: shape, id: db.cursorIds[i % db.cursorIds.length] ?? '' },
    });
  for (const subject of subjects) {
    for (let i = 0; i < WARMUP; i++) {
      await call(subject, i);
    }
  }
  const rounds = subjects.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    const spent = subjects.map(() => 0);
    for (let from = 0; from < QUERIES; from += SLICE) {
      for (const [k, subject] of subjects.entries()) {
        const started = nowMicros();
        for (let i = from; i < Math.min(from + SLICE, QUERIES); i++) {
          await call(subject, i);
        }
        spent[k] = (spent[k] ?? 0) + nowMicros() - started;
      }
    }
    for (const [k, micros] of spent.entries()) {
      rounds[k]?.push(micros / QUERIES);
    }
  }
  return rounds.map(median);
}

/** The plan of one shape's list query on a subject. */
async function planOf(subject: Subject, filters: ApiKeyFilters, shape: CursorShape): Promise<string> {
  const { db } = subject;
  const cursor: PageCursor | undefined =
    shape === 'no cursor' ? undefined : { direction: shape, id: db.cursorIds[0] ?? '' };
  queriesRun.length = 0;
  await db.store.listApiKeys({ organizationId: ORGANIZATION_ID, limit: LIMIT, cursor, filters });
  const { sql = '', parameters = [] } = queriesRun.at(-1) ?? {};
  return db.indexOf(sql, parameters);
}

/** Calls explained per shape. */
const EXPLAIN_SAMPLES = 100;

/** Mean server work of a list call of one shape (cursor position and page), over sampled cursors. */
async function serverWorkOf(
  { db }: Subject,
  filters: ApiKeyFilters,
  shape: CursorShape,
): Promise<ServerWork | undefined> {
  if (!db.explain) {
    return undefined;
  }
  const total = { buffers: 0, micros: 0 };
  for (let i = 0; i < EXPLAIN_SAMPLES; i++) {
    const cursor: PageCursor | undefined =
      shape === 'no cursor' ? undefined : { direction: shape, id: db.cursorIds[i % db.cursorIds.length] ?? '' };
    queriesRun.length = 0;
    await db.store.listApiKeys({ organizationId: ORGANIZATION_ID, limit: LIMIT, cursor, filters });
    for (const { sql, parameters } of [...queriesRun]) {
      const work = await db.explain(sql, parameters);
      total.buffers += work.buffers;
      total.micros += work.micros;
    }
  }
  return { buffers: total.buffers / EXPLAIN_SAMPLES, micros: total.micros / EXPLAIN_SAMPLES };
}

/** Prints a Markdown table under a heading; the first row is the header. */
function printTable(title: string, [header = [], ...rows]: string[][]): void {
  print();
  print(`## ${title}`);
  print();
  print(`| ${header.join(' | ')} |`);
  print(`|${header.map(() => ' --- ').join('|')}|`);
  for (const row of rows) {
    print(`| ${row.join(' | ')} |`);
  }
}

const sizeLabel = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`);
const fixed = (value: number | undefined, digits = 0) =>
  value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : '-';

/** Seeds both sizes, measures every shape on both, and prints the tables. */
async function measureEngine(engine: Engine): Promise<void> {
  const open = engine === 'sqlite' ? openSqlite : openPostgres;
  const subjects: Subject[] = [];
  try {
    for (const size of SIZES) {
      print(`${engine}: seeding ${sizeLabel(size)} keys (${await newestMigration()})...`);
      subjects.push({ size, db: await open(size) });
    }
    const [small, large] = SIZES.map(sizeLabel);
    const clock = CPU_CLOCK ? 'CPU time of this process' : 'wall clock';
    const planned = subjects.at(-1);
    const rows: string[][] = [['filter', 'cursor', small ?? '', large ?? '', 'ratio', `plan (${large})`]];
    const workRows: string[][] = [
      ['filter', 'cursor', `buffers ${small}`, `buffers ${large}`, `server µs ${small}`, `server µs ${large}`, 'ratio'],
    ];
    for (const [filter, filters] of SHAPES) {
      for (const cursor of CURSOR_SHAPES) {
        const [a, b] = await timeShape(subjects, filters, cursor);
        // One subject at a time: the queries a call ran are collected in one shared list.
        const work: (ServerWork | undefined)[] = [];
        for (const subject of subjects) {
          work.push(await serverWorkOf(subject, filters, cursor));
        }
        const [x, y] = work;
        rows.push([
          filter,
          cursor,
          fixed(a),
          fixed(b),
          fixed(a === undefined || b === undefined ? undefined : b / a, 2),
          planned ? await planOf(planned, filters, cursor) : '',
        ]);
        workRows.push([
          filter,
          cursor,
          fixed(x?.buffers, 1),
          fixed(y?.buffers, 1),
          fixed(x?.micros),
          fixed(y?.micros),
          fixed(x && y ? y.micros / x.micros : undefined, 2),
        ]);
      }
    }
    printTable(
      `${engine}: µs per list call (limit ${LIMIT}, median of ${ROUNDS} rounds of ${QUERIES} calls, ${clock})`,
      rows,
    );
    if (subjects.some(({ db }) => db.explain)) {
      printTable(
        `${engine}: server work per list call (EXPLAIN ANALYZE of its queries, mean of ${EXPLAIN_SAMPLES} calls)`,
        workRows,
      );
    }
    print();
    for (const { size, db } of subjects) {
      print(`${engine}: seeding ${sizeLabel(size)} keys took ${fixed(db.seedSeconds, 1)} s`);
    }
    if (planned) {
      const { down, up } = await planned.db.remigrate();
      print(
        `${engine}: on ${large} keys, undoing ${await newestMigration()} took ${fixed(down, 1)} s, ` +
          `applying it again ${fixed(up, 1)} s`,
      );
    }
    print();
  } finally {
    for (const { db } of subjects) {
      await db.drop();
    }
  }
}

for (const engine of ENGINES) {
  await measureEngine(engine);
}
