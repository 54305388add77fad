import type { EpochMicros } from './types.js';

let lastMicros = 0;

/**
 * Microseconds since the Unix epoch from the wall clock, with the sub-millisecond part from the high-resolution
 * timer. The timer's thousands do not line up with the wall clock's milliseconds, so the raw sum can step back
 * within one millisecond; the result is clamped to be strictly increasing, so a key created after another is newer.
 */
export function nowMicros(): number {
  const subMillisecond = Number(process.hrtime.bigint() % 1000n);
  const micros = Date.now() * 1000 + subMillisecond;
  lastMicros = micros > lastMicros ? micros : lastMicros + 1;
  return lastMicros;
}

// Keys listed together were mostly created within the same second: the date and time part is formatted once per
// second and reused, which makes formatting a 1000-key page several times cheaper (docs/benchmarks.md).
let cachedSecond = Number.NaN;
let cachedPrefix = '';

/** Microseconds since the epoch as RFC 3339 in UTC with six fractional digits: `2024-10-30T23:58:27.427722Z`. */
export function microsToRfc3339(micros: EpochMicros): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2024-10-30T23:58:27
  }
  return `${cachedPrefix}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 datetime with a time zone and at most six fractional digits (`2027-01-31T00:00:00Z`,
 * `2027-01-31T01:00:00.5+01:00`) as microseconds since the epoch; undefined for any other text, or a date that does
 * not exist (February 30th).
 */
export function rfc3339ToMicros(text: string): EpochMicros | undefined {
  const match = RFC3339.exec(text);
  if (!match) {
    return undefined;
  }
  const [, dateTime = '', fraction = '', zone = ''] = match;
  const millis = Date.parse(`${dateTime}${zone}`);
  // Date.parse rolls an impossible day over into the next month; formatting it back tells them apart.
  if (Number.isNaN(millis) || new Date(Date.parse(`${dateTime}Z`)).toISOString().slice(0, 19) !== dateTime) {
    return undefined;
  }
  return millis * 1000 + Number(fraction.padEnd(6, '0'));
}
