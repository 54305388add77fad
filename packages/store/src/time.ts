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
// second and reused, which makes formatting a 1000-key page several times cheaper.
let cachedSecond = Number.NaN;
let cachedPrefix = '';

/** Formats microseconds since the epoch as RFC 3339 in UTC with six fractional digits, e.g. `2024-10-30T23:58:27.427722Z`. */
export function microsToRfc3339(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2024-10-30T23:58:27
  }
  return `${cachedPrefix}.${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}
