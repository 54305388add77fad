import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  type IRateLimiterOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RateLimiterUnion,
} from 'rate-limiter-flexible';

/** The operator's rate-limit settings. A limit of 0 turns that limit off. */
export interface RateLimitSettings {
  /** Requests a minute per admin key. */
  perMinute: number;
  /** Requests an admin key may send at once, out of its minute's budget. */
  burst: number;
  /** Failed authentications a minute per client address, past which the address gets 429 instead of 401. */
  authFailuresPerMinute: number;
  /** Where the budgets live, shared by every replica; in this process's memory when undefined. */
  redisUrl?: string | undefined;
}

/** The limits that refuse requests: an admin key's budget, and failed authentications per client address. */
export type RateLimitName = 'admin_key' | 'auth_failures';

/** Where the limiter reports what its limits do (the metrics). */
export interface RateLimitCounters {
  /** A request a limit refused with 429. */
  countRateLimitRejection(limit: RateLimitName): void;
  /** A request a limit let through without counting it, because the limit's store (Redis) failed. */
  countUnlimitedRequest(limit: RateLimitName): void;
}

/** What the limiter says of one request: whether it may go on, and the admin key's budget for the headers. */
export type Verdict =
  | { allowed: true; limit: number; remaining: number; resetSeconds: number }
  | { allowed: false; limit: number; resetSeconds: number; retryAfterSeconds: number };

/** Each warning about the store (Redis) is logged at most once in this many milliseconds. */
const WARN_INTERVAL_MS = 60_000;

// The Redis client fails a command at once when it is not connected (no offline queue), and gives up on a stalled
// Redis after this long: a limiter that cannot answer lets the request through rather than make it wait.
const REDIS_COMMAND_TIMEOUT_MS = 500;
const REDIS_CONNECT_TIMEOUT_MS = 2000;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A gate that opens at most once per `intervalMs`: `open()` says whether it opened now. */
function onceEvery(intervalMs: number): { open(): boolean } {
  let openedAt = Number.NEGATIVE_INFINITY;
  return {
    open() {
      const now = performance.now();
      if (now - openedAt < intervalMs) {
        return false;
      }
      openedAt = now;
      return true;
    },
  };
}

/** `1 second`, `3 seconds`: how long a client is asked to wait, in an error message. */
export function describeWait(waitSeconds: number): string {
  return `${waitSeconds} second${waitSeconds === 1 ? '' : 's'}`;
}

/**
 * Rate limits by admin key, and failed authentications by client address, with rate-limiter-flexible in memory or in
 * Redis. An admin key's budget behaves like a token bucket of `burst` tokens refilled at `perMinute` a minute: two
 * windows bound it, `perMinute` requests a minute and `burst` requests per the time the rate takes to refill a
 * burst (100 per 5 s at 1,200 a minute). If Redis fails, requests are let through uncounted (fail open): a limiter
 * must never turn into an outage. Each request let through so is counted (`countUnlimitedRequest`), and the first
 * one logs a warning, then at most one a minute. That warning stands on its own: Redis connection errors, which
 * come whether or not a request needs Redis, log warnings of their own, so they never stand in for it.
 */
export class RequestLimiter {
  readonly #requests: RateLimiterUnion | undefined;
  readonly #authFailures: RateLimiterAbstract | undefined;
  readonly #redis: Redis | undefined;
  readonly #unlimitedWarning = onceEvery(WARN_INTERVAL_MS);
  readonly #connectionWarning = onceEvery(WARN_INTERVAL_MS);
  /** Whether a warning about unlimited requests was logged since requests were last counted. */
  #warnedUnlimited = false;

  /** `counters` hears of every request a limit refuses, and of every one let through uncounted (for metrics). */
  constructor(
    private readonly settings: RateLimitSettings,
    private readonly logger: Logger,
    private readonly counters?: RateLimitCounters,
  ) {
    this.#redis = settings.redisUrl ? this.#connectRedis(settings.redisUrl) : undefined;
    if (settings.perMinute > 0) {
      const burstWindowSeconds = Math.ceil((settings.burst * 60) / settings.perMinute);
      this.#requests = new RateLimiterUnion(
        this.#limiter({ keyPrefix: 'apikeys:rate:minute', points: settings.perMinute, duration: 60 }),
        this.#limiter({ keyPrefix: 'apikeys:rate:burst', points: settings.burst, duration: burstWindowSeconds }),
      );
    }
    if (settings.authFailuresPerMinute > 0) {
      this.#authFailures = this.#limiter({
        keyPrefix: 'apikeys:rate:auth-failures',
        points: settings.authFailuresPerMinute,
        duration: 60,
      });
    }
  }

  /** Whether admin keys are rate limited at all. */
  get limitsRequests(): boolean {
    return this.#requests !== undefined;
  }

  /**
   * Counts `requests` requests (1 unless a request weighs more) of an admin or verifier key; undefined when requests
   * are not limited or the limiter failed (fail open).
   */
  async consumeRequest(keyId: string, requests = 1): Promise<Verdict | undefined> {
    if (!this.#requests) {
      return undefined;
    }
    const limit = this.settings.perMinute;
    try {
      const results = Object.values(await this.#requests.consume(keyId, requests));
      this.#counted();
      const remaining = Math.min(...results.map((result) => result.remainingPoints));
      const resetSeconds = Math.max(...results.map((result) => Math.ceil(result.msBeforeNext / 1000)));
      return { allowed: true, limit, remaining, resetSeconds };
    } catch (rejection) {
      const results = Object.values(rejection as Record<string, unknown>);
      const refusals = results.filter((result): result is RateLimiterRes => result instanceof RateLimiterRes);
      if (refusals.length === 0 || refusals.length < results.length) {
        // A limiter failed rather than refused (Redis is down): the request goes through.
        this.#letThroughUnlimited(
          'admin_key',
          results.find((result) => !(result instanceof RateLimiterRes)),
        );
        return undefined;
      }
      this.#counted();
      const wait = Math.max(...refusals.map((result) => result.msBeforeNext));
      this.counters?.countRateLimitRejection('admin_key');
      return { allowed: false, limit, resetSeconds: seconds(wait), retryAfterSeconds: seconds(wait) };
    }
  }

  /**
   * Counts a failed authentication from an address. Returns the seconds to wait when the address is over its
   * limit, undefined when it may go on (or failures are not limited, or the limiter failed).
   */
  async consumeFailedAuthentication(address: string): Promise<number | undefined> {
    if (!this.#authFailures) {
      return undefined;
    }
    try {
      await this.#authFailures.consume(address);
      this.#counted();
      return undefined;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        this.#counted();
        this.counters?.countRateLimitRejection('auth_failures');
        return seconds(rejection.msBeforeNext);
      }
      this.#letThroughUnlimited('auth_failures', rejection);
      return undefined;
    }
  }

  /** Closes the connection to Redis, if any. */
  async close(): Promise<void> {
    await this.#redis?.quit().catch(() => this.#redis?.disconnect());
  }

  #limiter(options: IRateLimiterOptions & { keyPrefix: string }): RateLimiterAbstract {
    return this.#redis
      ? new RateLimiterRedis({ ...options, storeClient: this.#redis, rejectIfRedisNotReady: true })
      : new RateLimiterMemory(options);
  }

  #connectRedis(url: string): Redis {
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    });
    // Without a listener an 'error' event would crash the process; ioredis reconnects by itself.
    redis.on('error', (error: Error) => {
      if (this.#connectionWarning.open()) {
        this.logger.warn({ detail: error.message }, 'rate limiter: Redis connection error');
      }
    });
    return redis;
  }

  /** Counts a request let through because `limit`'s store failed, and warns (at most once a minute). */
  #letThroughUnlimited(limit: RateLimitName, error: unknown): void {
    this.counters?.countUnlimitedRequest(limit);
    if (this.#unlimitedWarning.open()) {
      this.#warnedUnlimited = true;
      const detail = error instanceof Error ? error.message : String(error);
      this.logger.warn({ limit, detail }, 'rate limiter unavailable: requests are not limited until it is back');
    }
  }

  /** Notes that the store counted a request: once after a warning, says that requests are limited again. */
  #counted(): void {
    if (this.#warnedUnlimited) {
      this.#warnedUnlimited = false;
      this.logger.info('rate limiter back: requests are limited again');
    }
  }
}
