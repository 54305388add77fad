import { DatabaseUnavailableError, STORE_CALLS, type Store, type StoreCall } from '@apikeys/store';
import { type Metrics, OTHER_DATABASE_ERROR } from './metrics.js';

/** Runs one store call, recording its duration by kind and outcome, and its error by reason. */
async function timed<T>(metrics: Metrics, kind: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const result = await call();
    metrics.recordQuery(kind, 'ok', (performance.now() - started) / 1000);
    return result;
  } catch (error) {
    metrics.recordQuery(kind, 'error', (performance.now() - started) / 1000);
    metrics.countDatabaseError(error instanceof DatabaseUnavailableError ? error.reason : OTHER_DATABASE_ERROR);
    throw error;
  }
}

/**
 * The store with every call timed (`store_query_duration_seconds`, as a query kind named after the call) and every
 * failure counted (`database_errors_total`), and its connection pools, if it has any, exposed as gauges. A
 * transaction is timed as one call: the calls inside it are part of it, and are not counted again. It is made over
 * the store (its prototype), so that what it does not wrap, such as the seeding port tests use, stays the store's.
 */
export function instrumentStore(store: Store, metrics: Metrics): Store {
  if (store.poolStats() !== undefined) {
    metrics.watchPools(() => store.poolStats());
  }
  const calls = Object.fromEntries(
    Object.keys(STORE_CALLS).map((kind) => {
      const method = store[kind as StoreCall] as (...args: unknown[]) => Promise<unknown>;
      return [kind, (...args: unknown[]) => timed(metrics, kind, () => method.apply(store, args))];
    }),
  ) as Pick<Store, StoreCall>;
  const special: Omit<Store, StoreCall> = {
    transaction: (work) => timed(metrics, 'transaction', () => store.transaction(work)),
    poolStats: () => store.poolStats(),
    watchKeyChanges: (listener) => store.watchKeyChanges(listener),
    close: () => store.close(),
  };
  return Object.assign(Object.create(store) as Store, calls, special);
}
