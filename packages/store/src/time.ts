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

/** Formats microseconds since the epoch as RFC 3339 in UTC with six fractional digits, e.g. `2024-10-30T23:58:27.427722Z`. */
export function microsToRfc3339(micros: number): string {
  const millis = Math.floor(micros / 1000);
  const microPart = micros - millis * 1000;
  const iso = new Date(millis).toISOString(); // 2024-10-30T23:58:27.427Z
  return `${iso.slice(0, -1)}${String(microPart).padStart(3, '0')}Z`;
}
