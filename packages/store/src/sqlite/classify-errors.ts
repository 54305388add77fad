import type { Unavailability, UnavailableReason } from '../unavailable.js';

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

/**
 * Whether a better-sqlite3 error means the database is unavailable (and why), by its result code, and what a write
 * it ended did. SQLite answers every statement, COMMIT included, and undoes a write it refuses: one that found the
 * lock held, the file read-only or missing, or the disk full (the commit record never reached the file) was not made.
 * An I/O error may come after the commit record was written (a failed sync): recovery may find it, so the write's
 * outcome is unknown.
 */
export function classifySqliteError(error: unknown): Unavailability | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') {
    return undefined;
  }
  const reason = REASONS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`))?.[1];
  return reason && { reason, writeOutcome: reason === 'io_error' ? 'unknown' : 'not_made' };
}
