import type { ApiKeyStatus } from '@apikeys/client';

/** A key's status as a badge; the word itself carries the meaning, the colour only repeats it. */
export function StatusBadge({ status }: { status: ApiKeyStatus }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}
