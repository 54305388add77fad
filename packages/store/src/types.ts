import type { ApiKeyStore } from './api-keys/types.js';
import type { AuditTrailStore } from './audit-trail/types.js';
import type { CredentialStore } from './credentials/types.js';
import type { OrganizationStore } from './organizations/types.js';
import type { UsageStore } from './usage/types.js';

export type * from './api-keys/types.js';
export type * from './audit-trail/types.js';
export type * from './credentials/types.js';
export type * from './organizations/types.js';
export type * from './seeding/types.js';
export type * from './shared-types.js';
export type * from './usage/types.js';

/** A key of any kind, by its ID. */
export interface KeyRef {
  kind: 'api_key' | 'admin_key' | 'verifier_key';
  id: string;
}

/** A key whose answer to a verification or an authentication may have changed, and how. */
export interface KeyChange extends KeyRef {
  /**
   * The organization the key belongs to; undefined when the change was announced by a process of an earlier release,
   * whose notifications named the key only.
   */
  organizationId: string | undefined;
  /** `rotated`: an API key was replaced by a new one (its expiry now ends its grace period); `updated`: any other. */
  change: 'updated' | 'rotated';
}

/**
 * What a watcher of key changes hears: one change; `lost` when the connection that brings other processes' changes
 * is lost (until `reset`, their changes go unheard); or `reset` when changes may have been missed (that connection is
 * back, or another process changed a SQLite file): whatever was read before may be stale.
 */
export type KeyChangeEvent = { type: 'changed'; change: KeyChange } | { type: 'lost' } | { type: 'reset' };

export type KeyChangeListener = (event: KeyChangeEvent) => void;

/** One connection pool of a store at one moment. */
export interface ConnectionPoolStats {
  /**
   * `pipeline`: the statements of requests, pipelined over few connections; `transactions`: transactions and the
   * other calls; `maintenance`: migrations and seeding.
   */
  pool: 'pipeline' | 'transactions' | 'maintenance';
  /** Connections open or opening. */
  size: number;
  /** Connections running at least one statement. */
  inUse: number;
  /**
   * Calls waiting for a connection. In the pipeline, where a connection takes several statements at once, the
   * statements queued behind another one on their connection.
   */
  waiting: number;
}

/** What the store is besides its aggregates: transactions, change announcements, health, its connections. */
export interface StoreLifecycle {
  /** Runs `work` in one transaction; everything it does through the given store commits or rolls back together. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
  /**
   * Calls `listener` for each change to an API key, admin key or verifier key made by any process on this database,
   * once it has committed: at once for this store's own, and as soon as the engine tells of the others' (PostgreSQL:
   * notifications; SQLite: a poll of the file's version, which says only that something changed: `reset`). Every
   * listener of the store hears every event, in the order the listeners came (one watch of the engine serves them
   * all). Resolves once listening, with the function that stops it.
   */
  watchKeyChanges(listener: KeyChangeListener): Promise<() => Promise<void>>;
  /** Runs a trivial query, within the store's deadline: resolves when the database answers. */
  ping(): Promise<void>;
  /** How busy each connection pool is, read when asked; undefined for an engine without pools (SQLite). */
  poolStats(): ConnectionPoolStats[] | undefined;
  /** Closes the connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * The storage layer shared by the server, the CLI and the benchmarks: one interface per aggregate. Every API key
 * operation is scoped to one organization: a key of another organization behaves exactly like a key that does not
 * exist. Each call that changes something records the change in an audit event, in the same transaction, as made in
 * its `context` (an operator's change when absent); a call that changes nothing records nothing.
 */
export type Store = OrganizationStore & CredentialStore & ApiKeyStore & UsageStore & AuditTrailStore & StoreLifecycle;

/** Brings a database's schema up to date. */
export interface SchemaMigrator {
  /** Applies every pending migration and returns the names of those it applied, in order. */
  migrateToLatest(): Promise<string[]>;
}

/** An opened database: the store, and the migrator of its schema (which the store does not run by itself). */
export interface OpenedStore {
  store: Store;
  migrator: SchemaMigrator;
  /** What an operator should know about the database as opened (that it is read-only, say); usually none. */
  warnings?: string[];
}
