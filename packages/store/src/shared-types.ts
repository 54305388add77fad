/** The types every aggregate of the store shares: a leaf module, so that the aggregates' types import no cycle. */

/** Integer microseconds since the Unix epoch: exact, portable between engines and cheap to compare. */
export type EpochMicros = number;

/** A keyset cursor: the ID of an API key and which side of it the page lies on. */
export interface PageCursor {
  direction: 'after' | 'before';
  id: string;
}

/** Who made a change: an admin key through the API, or an operator through the CLI (with the OS user, if known). */
export type AuditActor = { type: 'admin_key'; id: string } | { type: 'operator'; name: string | null };

/** The HTTP client of the request that made a change. */
export interface AuditClient {
  ipAddress: string | null;
  userAgent: string | null;
}

/**
 * Who makes the changes of a store call, and through which request: every change is recorded with it, in an audit
 * event written in the same transaction. Without one, a store records the change as an operator's
 * (`OPERATOR_CHANGES`): a call that does not come through the API comes from whoever runs the code.
 */
export interface ChangeContext {
  actor: AuditActor;
  /** The `request-id` of the API request; absent or null outside one. */
  requestId?: string | null | undefined;
  client?: AuditClient | null | undefined;
}
