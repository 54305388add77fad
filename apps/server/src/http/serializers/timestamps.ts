import type { EpochMicros } from '@apikeys/store';

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
