import pRetry from 'p-retry';

/** How long a call that found the database locked waits, on a timer, before it asks again. */
export const LOCK_RETRY_MS = 10;

/** Whether an error is SQLite's refusal of a lock that another connection holds (SQLITE_BUSY and its kinds). */
export function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `attempt` until it no longer finds the database locked, asking again every LOCK_RETRY_MS on timers, so that
 * the event loop goes on meanwhile; once `deadline` (`performance.now()`) has passed, fails with the last
 * SQLITE_BUSY. The connection's busy_timeout is 0, so an attempt fails at once instead of waiting inside SQLite.
 * An attempt that found the database locked changed nothing, so it is safe to repeat.
 */
export function retryWhileLocked<T>(attempt: () => T | Promise<T>, deadline: number): Promise<T> {
  return pRetry(async () => attempt(), {
    retries: Number.POSITIVE_INFINITY,
    factor: 1,
    minTimeout: LOCK_RETRY_MS,
    maxRetryTime: Math.max(0, deadline - performance.now()),
    shouldRetry: ({ error }) => isLocked(error),
  });
}
