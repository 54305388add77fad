import { formatTime } from '../format.js';

/** A timestamp in UTC, or `fallback` (`Never`, say) when there is none. */
export function TimeText({ value, fallback = '—' }: { value: string | null; fallback?: string }) {
  if (value === null) {
    return <>{fallback}</>;
  }
  return <time dateTime={value}>{formatTime(value)}</time>;
}
