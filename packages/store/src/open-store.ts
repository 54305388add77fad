import { resolve } from 'node:path';
import { openPostgresStore } from './postgres/open-postgres-store.js';
import { openSqliteStore, SQLITE_MEMORY } from './sqlite/open-sqlite-store.js';
import type { StoreOptions } from './store-options.js';
import type { OpenedStore, Store } from './types.js';

/** The SQLite file used when DATABASE_URL is not set, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = './data/api-keys.sqlite';

/** Where the data lives, parsed from DATABASE_URL. */
export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** A DATABASE_URL that cannot be used, with a message for the operator. */
export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

/**
 * Resolves a relative path against the directory the user ran the command in. Package managers run scripts in
 * the package's own folder but record the user's folder in INIT_CWD, so the server and the CLI started from the
 * repository root agree on `./data/api-keys.sqlite`.
 */
function fromInvocationDir(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

/**
 * Parses DATABASE_URL: unset or empty means the default SQLite file; `file:<path>` a SQLite file at that path
 * (`file::memory:` an in-memory database); `postgres://` and `postgresql://` a PostgreSQL server.
 * Relative SQLite paths are resolved against the directory the command was run from.
 */
export function parseDatabaseUrl(url: string | undefined): StoreLocation {
  if (url === undefined || url.trim() === '') {
    return { kind: 'sqlite', path: fromInvocationDir(DEFAULT_SQLITE_PATH) };
  }
  if (url.startsWith('file:')) {
    const path = url.slice('file:'.length);
    if (path === '') {
      throw new DatabaseUrlError('DATABASE_URL "file:" needs a path, e.g. file:./data/api-keys.sqlite');
    }
    return { kind: 'sqlite', path: path === SQLITE_MEMORY ? SQLITE_MEMORY : fromInvocationDir(path) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { kind: 'postgres', url };
  }
  throw new DatabaseUrlError(
    `DATABASE_URL must start with file: (SQLite) or postgres:// (PostgreSQL); got "${redactUrl(url)}"`,
  );
}

/** Opens the store at a parsed location. Does not migrate: see `migrator`, or `openMigratedStore`. */
export async function openStore(location: StoreLocation, options: StoreOptions = {}): Promise<OpenedStore> {
  switch (location.kind) {
    case 'sqlite':
      return openSqliteStore(location.path, options);
    case 'postgres':
      return openPostgresStore(location.url, options);
  }
}

/** A database that cannot be opened or migrated; the message names it (password hidden) and the root cause. */
export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
}

/** The deepest reason of an error: the store wraps driver errors (a refused connection, say) as their `cause`. */
function rootReason(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause !== undefined) {
    current = current.cause;
  }
  if (current instanceof Error) {
    // A connection refused on every address of a host arrives as an AggregateError with a code but no message.
    return current.message || (current as NodeJS.ErrnoException).code || current.name;
  }
  return String(current);
}

/** Where a location points, fit to print. */
export function describeLocation(location: StoreLocation): string {
  return location.kind === 'sqlite' ? location.path : redactUrl(location.url);
}

/**
 * Opens the store and brings its schema up to date, as the server and the CLI do at start. Returns the store and
 * the migrations this call applied; throws a DatabaseOpenError with a message fit for an operator.
 */
export async function openMigratedStore(
  location: StoreLocation,
  options: StoreOptions = {},
): Promise<{ store: Store; applied: string[]; warnings: string[] }> {
  const cannotOpen = (error: unknown) =>
    new DatabaseOpenError(
      `cannot open the database ${describeLocation(location)} (DATABASE_URL): ${rootReason(error)}`,
      {
        cause: error,
      },
    );
  let opened: OpenedStore;
  try {
    opened = await openStore(location, options);
  } catch (error) {
    throw cannotOpen(error);
  }
  const { store, migrator, warnings = [] } = opened;
  try {
    return { store, applied: await migrator.migrateToLatest(), warnings };
  } catch (error) {
    await store.close().catch(() => {});
    throw cannotOpen(error);
  }
}

/**
 * Hides the password of a URL so it can be printed: `postgres://app:secret@host/db` → `postgres://app:***@host/db`.
 * The password runs to the last `@` before the path, so a password holding a raw `@` is hidden whole.
 */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^/]*@/i, '$1:***@');
}
