import { type ApiKeyFilters, DEFAULT_ORGANIZATION, type PageCursor } from '@apikeys/store';
import type { CURSOR_SHAPES } from '@apikeys/store/testing';
import type { MeasuredDatabase, ServerWork } from './measured-database.js';

export type CursorShape = (typeof CURSOR_SHAPES)[number];

/** A seeded database of one size. */
export interface Subject {
  size: number;
  db: MeasuredDatabase;
}

/** How a shape is timed. */
export interface TimingSettings {
  /** Rounds of calls; the figure is their median. */
  rounds: number;
  /** Calls per round and subject. */
  queries: number;
  /** Counts this process's CPU time instead of the wall clock. */
  cpuClock: boolean;
}

const ORGANIZATION_ID = DEFAULT_ORGANIZATION.id;
/** The page size of every call. */
export const LIMIT = 20;
/** Calls per slice: the subjects take turns slice by slice, so that load from outside hits all of them alike. */
const SLICE = 100;
/** Calls explained per shape. */
export const EXPLAIN_SAMPLES = 100;

/** The clock queries are timed by, in µs. */
function nowMicros(cpuClock: boolean): number {
  if (cpuClock) {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
  return performance.now() * 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function cursorOf(db: MeasuredDatabase, shape: CursorShape, index: number): PageCursor | undefined {
  return shape === 'no cursor' ? undefined : { direction: shape, id: db.cursorIds[index % db.cursorIds.length] ?? '' };
}

const list = (db: MeasuredDatabase, filters: ApiKeyFilters, cursor: PageCursor | undefined) =>
  db.store.listApiKeys({ organizationId: ORGANIZATION_ID, limit: LIMIT, filters, cursor });

/**
 * Median µs per list call of one shape for every subject. Each round makes `queries` calls per subject, rotating
 * through its sampled cursors, in slices that alternate between the subjects.
 */
export async function timeShape(
  subjects: readonly Subject[],
  filters: ApiKeyFilters,
  shape: CursorShape,
  { rounds, queries, cpuClock }: TimingSettings,
): Promise<number[]> {
  const call = ({ db }: Subject, index: number) => list(db, filters, cursorOf(db, shape, index));
  for (const subject of subjects) {
    for (let index = 0; index < Math.min(200, queries); index++) {
      await call(subject, index);
    }
  }
  const perRound = subjects.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const spent = subjects.map(() => 0);
    for (let from = 0; from < queries; from += SLICE) {
      for (const [k, subject] of subjects.entries()) {
        const started = nowMicros(cpuClock);
        for (let index = from; index < Math.min(from + SLICE, queries); index++) {
          await call(subject, index);
        }
        spent[k] = (spent[k] ?? 0) + nowMicros(cpuClock) - started;
      }
    }
    for (const [k, micros] of spent.entries()) {
      perRound[k]?.push(micros / queries);
    }
  }
  return perRound.map(median);
}

/** The plan of one shape's list query on a database. */
export async function planOf(db: MeasuredDatabase, filters: ApiKeyFilters, shape: CursorShape): Promise<string> {
  db.queriesRun.length = 0;
  await list(db, filters, cursorOf(db, shape, 0));
  const query = db.queriesRun.at(-1);
  return query ? db.indexOf(query) : '';
}

/** Mean server work of a list call of one shape (cursor position and page), over sampled cursors. */
export async function serverWorkOf(
  db: MeasuredDatabase,
  filters: ApiKeyFilters,
  shape: CursorShape,
): Promise<ServerWork | undefined> {
  if (!db.explain) {
    return undefined;
  }
  const total = { buffers: 0, micros: 0 };
  for (let index = 0; index < EXPLAIN_SAMPLES; index++) {
    db.queriesRun.length = 0;
    await list(db, filters, cursorOf(db, shape, index));
    for (const query of [...db.queriesRun]) {
      const work = await db.explain(query);
      total.buffers += work.buffers;
      total.micros += work.micros;
    }
  }
  return { buffers: total.buffers / EXPLAIN_SAMPLES, micros: total.micros / EXPLAIN_SAMPLES };
}
