/**
 * Measures every list query shape (each filter combination, the status sets among them, each cursor direction) at a
 * small and a large collection on the latest migration, through the store alone (no HTTP), and prints µs per list
 * call and the large/small ratio. Each size gets a freshly seeded database (the seed's mix of expiries and
 * principals included), and seeding is timed; the calls of one shape take turns between the databases, so that load
 * from outside hits them alike. Cursors are key IDs sampled uniformly over the collection, as in the benchmark
 * suite. On PostgreSQL it also explains each call's queries, for the buffers they read (which no outside load
 * disturbs) and the server's execution time.
 *
 *   pnpm --filter @apikeys/bench measure:list-queries [--engine sqlite|postgres|both] [--small 10000]
 *     [--large 1000000] [--rounds 5] [--queries 1000] [--clock wall|cpu] [--dir /tmp/apikeys-list-measure]
 *     [--filters expired,...]
 *
 * `--filters` names the filter shapes to measure (the store's `FILTER_SHAPES` and `ROW_CHECKED_STATUS_SHAPES`, which
 * its query-plan tests check), all by default. `--clock cpu` counts this process's CPU time instead of the wall
 * clock: steadier on a busy machine, and the same thing for SQLite (in process), but blind to the PostgreSQL
 * server's work.
 *
 * PostgreSQL runs on TEST_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres) in databases
 * named apikeys_idx_measure_*, dropped at the end. Its wall-clock times include planning: the store's named
 * statements are planned anew at each call until PostgreSQL settles on a generic plan, and it may do so at one
 * size and not at the other. SQLite files go to --dir and are deleted at the end.
 */
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  CURSOR_SHAPES,
  FILTER_SHAPES,
  migrationNames,
  ROW_CHECKED_STATUS_SHAPES,
  TEST_POSTGRES_URL,
} from '@apikeys/store/testing';
import { EXPLAIN_SAMPLES, LIMIT, planOf, type Subject, serverWorkOf, timeShape } from './measure-shape.js';
import { type Engine, openMeasuredDatabase, type ServerWork } from './measured-database.js';

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

const SIZES = [Number(args.small), Number(args.large)] as const;
const TIMING = { rounds: Number(args.rounds), queries: Number(args.queries), cpuClock: args.clock === 'cpu' };
const PLACES = { dir: args.dir, postgresUrl: TEST_POSTGRES_URL, samples: TIMING.queries };
const ENGINES: Engine[] = args.engine === 'both' ? ['sqlite', 'postgres'] : [args.engine as Engine];
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
  const subjects: Subject[] = [];
  try {
    const newest = (await migrationNames()).at(-1);
    for (const size of SIZES) {
      print(`${engine}: seeding ${sizeLabel(size)} keys (${newest})...`);
      subjects.push({ size, db: await openMeasuredDatabase(engine, size, PLACES) });
    }
    const [small, large] = SIZES.map(sizeLabel);
    const clock = TIMING.cpuClock ? 'CPU time of this process' : 'wall clock';
    const planned = subjects.at(-1);
    const rows: string[][] = [['filter', 'cursor', small ?? '', large ?? '', 'ratio', `plan (${large})`]];
    const workRows: string[][] = [
      ['filter', 'cursor', `buffers ${small}`, `buffers ${large}`, `server µs ${small}`, `server µs ${large}`, 'ratio'],
    ];
    for (const [filter, filters] of SHAPES) {
      for (const cursor of CURSOR_SHAPES) {
        const [a, b] = await timeShape(subjects, filters, cursor, TIMING);
        const work: (ServerWork | undefined)[] = [];
        for (const { db } of subjects) {
          work.push(await serverWorkOf(db, filters, cursor));
        }
        const [x, y] = work;
        rows.push([
          filter,
          cursor,
          fixed(a),
          fixed(b),
          fixed(a === undefined || b === undefined ? undefined : b / a, 2),
          planned ? await planOf(planned.db, filters, cursor) : '',
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
    const { rounds, queries } = TIMING;
    printTable(
      `${engine}: µs per list call (limit ${LIMIT}, median of ${rounds} rounds of ${queries} calls, ${clock})`,
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
    print();
  } finally {
    for (const { db } of subjects) {
      await db.drop();
    }
  }
}

mkdirSync(args.dir, { recursive: true });
for (const engine of ENGINES) {
  await measureEngine(engine);
}
