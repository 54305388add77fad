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
 * The database could not serve a store call: the call may be tried again later. For a write, its outcome is
 * unknown unless `reason` says it never reached the database; the caller must not report it as done.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';

  constructor(
    readonly reason: UnavailableReason,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** Tells which errors of an engine mean that the database is unavailable, and why; undefined for any other error. */
export type UnavailableClassifier = (error: unknown) => UnavailableReason | undefined;

/** Rethrows `error` as a DatabaseUnavailableError when the classifier recognises it, as it is otherwise. */
function reclassify(error: unknown, classify: UnavailableClassifier): never {
  if (error instanceof DatabaseUnavailableError) {
    throw error;
  }
  const reason = classify(error);
  if (reason === undefined) {
    throw error;
  }
  const detail = error instanceof Error ? error.message || error.name : String(error);
  throw new DatabaseUnavailableError(reason, `the database is unavailable (${reason}): ${detail}`, { cause: error });
}

/**
 * The store with every call's engine errors classified: an error that means the database is unavailable becomes a
 * DatabaseUnavailableError, whatever the call, so that callers handle one error type for every engine.
 */
export function classifyingUnavailable(store: Store, classify: UnavailableClassifier): Store {
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      return reclassify(error, classify);
    }
  };
  return {
    transaction: (work) => guard(() => store.transaction((inner) => work(classifyingUnavailable(inner, classify)))),
    createOrganization: (name, context) => guard(() => store.createOrganization(name, context)),
    listOrganizations: () => guard(() => store.listOrganizations()),
    getOrganization: (id) => guard(() => store.getOrganization(id)),
    createAdminKey: (input, context) => guard(() => store.createAdminKey(input, context)),
    setAdminKeyStatus: (id, status, context) => guard(() => store.setAdminKeyStatus(id, status, context)),
    findCredential: (secretHash, kind) => guard(() => store.findCredential(secretHash, kind)),
    createVerifierKey: (input) => guard(() => store.createVerifierKey(input)),
    setVerifierKeyStatus: (id, status) => guard(() => store.setVerifierKeyStatus(id, status)),
    findApiKeyBySecretHash: (secretHash) => guard(() => store.findApiKeyBySecretHash(secretHash)),
    recordKeyUsage: (uses) => guard(() => store.recordKeyUsage(uses)),
    watchKeyChanges: (listener) => store.watchKeyChanges(listener),
    createApiKey: (input, context) => guard(() => store.createApiKey(input, context)),
    rotateApiKey: (input, context) => guard(() => store.rotateApiKey(input, context)),
    seedApiKeys: (options, context) => guard(() => store.seedApiKeys(options, context)),
    getApiKey: (organizationId, id) => guard(() => store.getApiKey(organizationId, id)),
    listApiKeys: (query) => guard(() => store.listApiKeys(query)),
    updateApiKey: (organizationId, id, patch, context) =>
      guard(() => store.updateApiKey(organizationId, id, patch, context)),
    listAuditEvents: (query) => guard(() => store.listAuditEvents(query)),
    getAuditEvent: (organizationId, id) => guard(() => store.getAuditEvent(organizationId, id)),
    seedAuditEvents: (options) => guard(() => store.seedAuditEvents(options)),
    ping: () => guard(() => store.ping()),
    countActiveAdminKeys: () => guard(() => store.countActiveAdminKeys()),
    poolStats: () => store.poolStats(),
    close: () => store.close(),
  };
}
