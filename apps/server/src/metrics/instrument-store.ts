import { DatabaseUnavailableError, type Store } from '@apikeys/store';
import { type Metrics, OTHER_DATABASE_ERROR } from './metrics.js';

/** The Store methods that are timed one by one, each as a query kind named after the method. */
type TimedMethod = Exclude<keyof Store, 'transaction' | 'poolStats' | 'close' | 'watchKeyChanges'>;

// A Record, so that a method added to Store is a compile error here until it is timed (or excluded above).
const TIMED_METHODS: Record<TimedMethod, true> = {
  createOrganization: true,
  listOrganizations: true,
  getOrganization: true,
  createAdminKey: true,
  setAdminKeyStatus: true,
  findCredential: true,
  createVerifierKey: true,
  setVerifierKeyStatus: true,
  findApiKeyBySecretHash: true,
  recordKeyUsage: true,
  createApiKey: true,
  rotateApiKey: true,
  seedApiKeys: true,
  getApiKey: true,
  listApiKeys: true,
  updateApiKey: true,
  listAuditEvents: true,
  getAuditEvent: true,
  seedAuditEvents: true,
  ping: true,
  countActiveAdminKeys: true,
};

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
 * The store with every call timed (`store_query_duration_seconds`, by method name) and every failure counted
 * (`database_errors_total`), and its connection pools, if it has any, exposed as gauges. A transaction is timed as
 * one call: the calls inside it are part of it, and are not counted again.
 */
export function instrumentStore(store: Store, metrics: Metrics): Store {
  if (store.poolStats() !== undefined) {
    metrics.watchPools(() => store.poolStats());
  }
  const methods = Object.fromEntries(
    Object.keys(TIMED_METHODS).map((kind) => {
      const method = store[kind as TimedMethod] as (...args: unknown[]) => Promise<unknown>;
      return [kind, (...args: unknown[]) => timed(metrics, kind, () => method.apply(store, args))];
    }),
  ) as Pick<Store, TimedMethod>;
  return {
    ...methods,
    transaction: (work) => timed(metrics, 'transaction', () => store.transaction(work)),
    poolStats: () => store.poolStats(),
    watchKeyChanges: (listener) => store.watchKeyChanges(listener),
    close: () => store.close(),
  };
}
