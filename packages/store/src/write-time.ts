import { nowMicros } from './time.js';
import type { EpochMicros } from './types.js';

/**
 * Stands, among the parameters of a write, for the moment the write runs. The engine puts the time in when it starts
 * the write, holding the write lock (SQLite's group commit, or the transaction the write runs in), so that whatever a
 * write decides from the clock (whether a key has expired) and the time it records are those of the moment it is
 * made, never of the moment it was queued: a write that waited behind another sees that one's effects as past.
 * (PostgreSQL's statements read the database's clock themselves, once they hold the row's lock.)
 */
export const WRITE_TIME: unique symbol = Symbol('the moment the write runs');

/** The parameters with `WRITE_TIME` replaced by `now`. */
export function atWriteTime(parameters: readonly unknown[], now: EpochMicros = nowMicros()): unknown[] {
  return parameters.map((parameter) => (parameter === WRITE_TIME ? now : parameter));
}
