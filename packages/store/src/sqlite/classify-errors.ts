import type { UnavailableReason } from '../unavailable.js';

/** The reason a SQLite error means the database is unavailable, by the primary result code it starts with. */
const REASONS: [prefix: string, reason: UnavailableReason][] = [
  // Another connection holds the lock past the deadline.
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_LOCKED', 'busy'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_FULL', 'full'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_CANTOPEN', 'unreachable'],
];

/** Whether a better-sqlite3 error means the database is unavailable (and why), by its result code. */
export function classifySqliteError(error: unknown): UnavailableReason | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') {
    return undefined;
  }
  return REASONS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`))?.[1];
}
