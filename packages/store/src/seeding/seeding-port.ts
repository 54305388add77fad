import type { EventFacts } from '../audit-trail/audit-events.js';
import type { BulkTable, BulkTables } from '../schema.js';
import type { ChangeContext, Store } from '../types.js';

/** The property of a store that holds its seeding port: a symbol, so that it is no call of `Store`. */
export const SEEDING_PORT = Symbol('seeding port');

/**
 * What seeding needs of a store that its calls do not offer: bulk inserts, and the recording of an event. Kept off
 * the production `Store` type: only the seeding functions reach it, through `seedingPortOf`.
 */
export interface SeedingPort {
  /**
   * Inserts rows through the engine's own connection, outside any transaction (it throws inside `transaction()`),
   * committing every so many rows (`bulkLoadRowsPerCommit`). Returns the number of rows inserted.
   */
  insertRows<Table extends BulkTable>(table: Table, chunks: Iterable<BulkTables[Table][]>): Promise<number>;
  /** Records an event in a transaction of its own. */
  recordEvent(facts: EventFacts, context: ChangeContext): Promise<void>;
}

/** A store with its seeding port. */
export interface Seedable {
  readonly [SEEDING_PORT]: SeedingPort;
}

// Rows generated per chunk: small, so that each chunk is garbage before the next young-generation collection
// (docs/benchmarks.md, "Seeding"). Adapters group chunks into larger writes.
export const SEED_CHUNK_SIZE = 2_000;

/**
 * The seeding port of a store opened by `openStore` (or by an engine's opener), through any wrapper that keeps it
 * (the store's own wrappers do).
 */
export function seedingPortOf(store: Store): SeedingPort {
  const port = (store as Partial<Seedable>)[SEEDING_PORT];
  if (!port) {
    throw new TypeError('this store cannot seed: it has no seeding port');
  }
  return port;
}
