import { SEEDING_PORT, type Seedable, type SeedingPort } from './seeding/seeding-port.js';
import { STORE_CALLS, type StoreCall } from './store-calls.js';
import type { Store } from './types.js';

/** Why the database could not serve a call. */
export type UnavailableReason =
  /** No connection could be made, or the one in use broke. */
  | 'unreachable'
  /** The database did not answer within the deadline (`timeoutMs`). */
  | 'timeout'
  /** The database is there but refuses work for now: shutting down, starting up, locked, out of connections. */
  | 'busy'
  /** The database refuses writes: a read-only file or file system, a read-only server. */
  | 'read_only'
  /** The disk is full. */
  | 'full'
  /** The storage failed to read or write. */
  | 'io_error';

/**
 * What a store call that failed changed: `not_made`, certainly nothing (the lock was never obtained, no connection
 * could be made, a statement failed before the commit, the deadline passed while the call waited in a queue; and
 * every read); `unknown`, a write whose commit (or whose one statement, on its own) was sent and got no answer, so
 * that it may have committed.
 */
export type WriteOutcome = 'not_made' | 'unknown';

/**
 * The database could not serve a store call: the call may be tried again later. `writeOutcome` says whether a write
 * may have been made all the same: the caller must not report it as done, nor as not done unless `not_made`.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  readonly writeOutcome: WriteOutcome;

  constructor(
    readonly reason: UnavailableReason,
    message: string,
    options: { cause?: unknown; writeOutcome?: WriteOutcome } = {},
  ) {
    super(message, { cause: options.cause });
    this.writeOutcome = options.writeOutcome ?? 'unknown';
  }
}

/** Why an engine's error means the database is unavailable, and what a write that it ended did. */
export interface Unavailability {
  reason: UnavailableReason;
  /** For a write ended by this error, when nothing else is known of where it failed (see `beforeCommit`). */
  writeOutcome: WriteOutcome;
}

/** Tells which errors of an engine mean that the database is unavailable; undefined for any other error. */
export type UnavailableClassifier = (error: unknown) => Unavailability | undefined;

/** The errors that ended a write before its commit was sent (see `beforeCommit`). */
const raisedBeforeCommit = new WeakSet<object>();

/**
 * Records that `error` ended a write before the statement that commits it was sent (a failed BEGIN or statement of a
 * transaction, no connection): whatever the error, the write was not made. Returns the error.
 */
export function beforeCommit<E>(error: E): E {
  if (typeof error === 'object' && error !== null) {
    raisedBeforeCommit.add(error);
  }
  return error;
}

/**
 * Rethrows `error` as a DatabaseUnavailableError when the classifier recognises it, as it is otherwise. A read
 * (`write` false) changed nothing, whatever the error.
 */
function reclassify(error: unknown, classify: UnavailableClassifier, write: boolean): never {
  if (error instanceof DatabaseUnavailableError) {
    throw error;
  }
  const unavailable = classify(error);
  if (unavailable === undefined) {
    throw error;
  }
  const { reason } = unavailable;
  const notMade = !write || raisedBeforeCommit.has(error as object);
  const detail = error instanceof Error ? error.message || error.name : String(error);
  throw new DatabaseUnavailableError(reason, `the database is unavailable (${reason}): ${detail}`, {
    cause: error,
    writeOutcome: notMade ? 'not_made' : unavailable.writeOutcome,
  });
}

/**
 * The store with every call's engine errors classified: an error that means the database is unavailable becomes a
 * DatabaseUnavailableError, whatever the call, so that callers handle one error type for every engine. Its seeding
 * port, if it has one, is classified too (as writes).
 */
export function classifyingUnavailable(store: Store, classify: UnavailableClassifier): Store {
  const guard =
    (write: boolean) =>
    async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        return reclassify(error, classify, write);
      }
    };
  const write = guard(true);
  const calls = Object.fromEntries(
    Object.entries(STORE_CALLS).map(([name, kind]) => {
      const method = store[name as StoreCall] as (...args: unknown[]) => Promise<unknown>;
      const guarded = guard(kind === 'write');
      return [name, (...args: unknown[]) => guarded(() => method.apply(store, args))];
    }),
  ) as Pick<Store, StoreCall>;
  const seeding = (store as Partial<Seedable>)[SEEDING_PORT];
  return {
    ...calls,
    transaction: (work) => write(() => store.transaction((inner) => work(classifyingUnavailable(inner, classify)))),
    watchKeyChanges: (listener) => store.watchKeyChanges(listener),
    poolStats: () => store.poolStats(),
    close: () => store.close(),
    ...(seeding && {
      [SEEDING_PORT]: {
        insertRows: (table, chunks) => write(() => seeding.insertRows(table, chunks)),
        recordEvent: (facts, context) => write(() => seeding.recordEvent(facts, context)),
      } satisfies SeedingPort,
    }),
  };
}
