import type { Logger } from 'pino';

/** At most one warning in this many milliseconds, however many refusals come. */
export const REFUSAL_WARNING_INTERVAL_MS = 10_000;

/**
 * Warns that subscriptions are being refused: the first refusal at once, then at most one line per interval with the
 * refusals counted by reason since the last line. A flood of refusals (a tenant past its quota that retries without
 * pause, say) costs a few bytes of log a second rather than a line, or a stack, per refusal.
 */
export class RefusalWarnings<Reason extends string> {
  #counts = new Map<Reason, number>();
  #lastWarnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Notes one refusal, and warns when the interval since the last warning has passed. */
  refused(reason: Reason): void {
    this.#counts.set(reason, (this.#counts.get(reason) ?? 0) + 1);
    const now = this.now();
    if (now - this.#lastWarnedAt < REFUSAL_WARNING_INTERVAL_MS) {
      return;
    }
    const since = this.#lastWarnedAt === Number.NEGATIVE_INFINITY ? undefined : now - this.#lastWarnedAt;
    this.#lastWarnedAt = now;
    const refused = Object.fromEntries(this.#counts);
    this.#counts = new Map();
    this.logger.warn(
      { refused, ...(since !== undefined && { since_ms: Math.round(since) }) },
      'change feed: subscriptions refused (counted by reason since the last such line)',
    );
  }
}
