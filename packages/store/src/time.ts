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
