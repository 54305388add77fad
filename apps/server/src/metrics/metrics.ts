import type { ConnectionPoolStats, UnavailableReason } from '@apikeys/store';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ChangeFeedCounters, SubscriptionEnd, SubscriptionRefusal } from '../change-feed/key-change-feed.js';
import type { RateLimitCounters, RateLimitName } from '../rate-limits/request-limiter.js';
import type { UsageCounters, UsageDropReason } from '../verification/usage-recorder.js';

/** The prefix of the service's own metrics (the default process metrics keep their standard names). */
const PREFIX = 'apikeys_';

// From well under the typical request (a millisecond or two) to past the database deadline (5 s by default).
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// From an SQLite read (a tenth of a millisecond) to the database deadline.
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Every reason a database can be unavailable, so that each counter exists at 0 before its first error; a Record, so
 * that a new reason is a compile error here until it is listed.
 */
const UNAVAILABLE_REASONS: Record<UnavailableReason, true> = {
  unreachable: true,
  timeout: true,
  busy: true,
  read_only: true,
  full: true,
  io_error: true,
};
/** A store error that is not the database being unavailable: a bug, or a constraint the API should have checked. */
export const OTHER_DATABASE_ERROR = 'other';
type DatabaseErrorReason = UnavailableReason | typeof OTHER_DATABASE_ERROR;

const RATE_LIMITS: Record<RateLimitName, true> = { admin_key: true, auth_failures: true };
const SUBSCRIPTION_ENDS: Record<SubscriptionEnd, true> = {
  client_closed: true,
  slow: true,
  lifetime: true,
  shutdown: true,
  notifications_lost: true,
  credential_changed: true,
};
const SUBSCRIPTION_REFUSALS: Record<SubscriptionRefusal, true> = {
  limit: true,
  credential_quota: true,
  organization_quota: true,
  shutdown: true,
  notifications_lost: true,
};

const USAGE_DROPS: Record<UsageDropReason, true> = { pending_full: true, write_failed: true };

/** Whether a store call answered or threw. */
export type QueryOutcome = 'ok' | 'error';

/**
 * The server's Prometheus metrics, in a registry of their own (never prom-client's global one, so that a process may
 * hold several, as tests do): the default process metrics, and the service's, which the HTTP middleware, the store
 * decorator and the rate limiter record into. Label values come from closed sets (operationIds, statuses, store
 * method names, reasons), never from paths, IDs or secrets.
 */
export class Metrics implements RateLimitCounters, ChangeFeedCounters, UsageCounters {
  readonly registry = new Registry();
  readonly #requests: Counter<'operation' | 'status'>;
  readonly #requestDuration: Histogram<'operation'>;
  readonly #queryDuration: Histogram<'kind' | 'outcome'>;
  readonly #databaseErrors: Counter<'reason'>;
  readonly #rateLimitRejections: Counter<'limit'>;
  readonly #unlimitedRequests: Counter<'limit'>;
  readonly #subscriptionsEnded: Counter<'reason'>;
  readonly #subscriptionsRefused: Counter<'reason'>;
  readonly #keyUsesDropped: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'HTTP requests answered (or aborted), by operationId ("unmatched" outside the spec) and status',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.#requestDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time from the start of a request to the end of its response, by operationId',
      labelNames: ['operation'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#queryDuration = new Histogram({
      name: `${PREFIX}store_query_duration_seconds`,
      help: 'Duration of store calls, by kind (the Store method) and outcome (ok or error)',
      labelNames: ['kind', 'outcome'],
      buckets: QUERY_BUCKETS,
      registers,
    });
    this.#databaseErrors = new Counter({
      name: `${PREFIX}database_errors_total`,
      help: 'Store calls that failed, by reason: why the database was unavailable, or "other"',
      labelNames: ['reason'],
      registers,
    });
    this.#rateLimitRejections = new Counter({
      name: `${PREFIX}rate_limit_rejections_total`,
      help: 'Requests refused with 429, by limit: the admin key budget, or failed authentications per address',
      labelNames: ['limit'],
      registers,
    });
    this.#unlimitedRequests = new Counter({
      name: `${PREFIX}rate_limit_unlimited_requests_total`,
      help: 'Requests a limit let through without counting them because its store (Redis) failed, by limit',
      labelNames: ['limit'],
      registers,
    });
    this.#subscriptionsEnded = new Counter({
      name: `${PREFIX}change_feed_subscriptions_ended_total`,
      help: 'Change feed subscriptions ended, by reason (slow: dropped for not reading)',
      labelNames: ['reason'],
      registers,
    });
    this.#subscriptionsRefused = new Counter({
      name: `${PREFIX}change_feed_subscriptions_refused_total`,
      help:
        'Change feed subscriptions refused, by reason: limit (503: the process holds its maximum), credential_quota ' +
        "and organization_quota (429: the caller's key or organization holds its share), shutdown, notifications_lost",
      labelNames: ['reason'],
      registers,
    });
    this.#keyUsesDropped = new Counter({
      name: `${PREFIX}key_uses_dropped_total`,
      help:
        'Uses of keys not recorded (last_used_at may lag), by reason: pending_full (more keys waiting than the ' +
        'server keeps), write_failed (a failed write whose keys could not all be kept for the next)',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of Object.keys(USAGE_DROPS)) {
      this.#keyUsesDropped.inc({ reason }, 0);
    }
    for (const reason of Object.keys(SUBSCRIPTION_ENDS)) {
      this.#subscriptionsEnded.inc({ reason }, 0);
    }
    for (const reason of Object.keys(SUBSCRIPTION_REFUSALS)) {
      this.#subscriptionsRefused.inc({ reason }, 0);
    }
    for (const reason of [...Object.keys(UNAVAILABLE_REASONS), OTHER_DATABASE_ERROR]) {
      this.#databaseErrors.inc({ reason }, 0);
    }
    for (const limit of Object.keys(RATE_LIMITS)) {
      this.#rateLimitRejections.inc({ limit }, 0);
      this.#unlimitedRequests.inc({ limit }, 0);
    }
  }

  /** Counts one request and its duration. `status` is the HTTP status, or `aborted` when the client went away. */
  recordRequest(operation: string, status: string, seconds: number): void {
    this.#requests.inc({ operation, status });
    this.#requestDuration.observe({ operation }, seconds);
  }

  /** Records the duration of one store call. */
  recordQuery(kind: string, outcome: QueryOutcome, seconds: number): void {
    this.#queryDuration.observe({ kind, outcome }, seconds);
  }

  /** Counts a failed store call by why it failed. */
  countDatabaseError(reason: DatabaseErrorReason): void {
    this.#databaseErrors.inc({ reason });
  }

  /** Counts a request refused by a rate limit. */
  countRateLimitRejection(limit: RateLimitName): void {
    this.#rateLimitRejections.inc({ limit });
  }

  /** Counts a request a limit let through uncounted because its store (Redis) failed. */
  countUnlimitedRequest(limit: RateLimitName): void {
    this.#unlimitedRequests.inc({ limit });
  }

  countSubscriptionEnded(reason: SubscriptionEnd): void {
    this.#subscriptionsEnded.inc({ reason });
  }

  countSubscriptionRefused(reason: SubscriptionRefusal): void {
    this.#subscriptionsRefused.inc({ reason });
  }

  countKeyUsesDropped(reason: UsageDropReason, count: number): void {
    this.#keyUsesDropped.inc({ reason }, count);
  }

  /** Exposes the number of open change feed subscriptions that `read` reports, read at each scrape. */
  watchSubscriptions(read: () => number): void {
    new Gauge({
      name: `${PREFIX}change_feed_subscriptions`,
      help: 'Change feed subscriptions open in this process (GET /v1/keys/changes)',
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Exposes the connection pools that `read` reports, read at each scrape, as gauges labelled by pool. */
  watchPools(read: () => ConnectionPoolStats[] | undefined): void {
    const gauge = (name: string, help: string, value: (stats: ConnectionPoolStats) => number) =>
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        labelNames: ['pool'],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const stats of read() ?? []) {
            this.set({ pool: stats.pool }, value(stats));
          }
        },
      });
    gauge('database_pool_connections', 'Database connections open or opening, by pool', (stats) => stats.size);
    gauge(
      'database_pool_connections_in_use',
      'Database connections running at least one statement, by pool',
      (stats) => stats.inUse,
    );
    gauge(
      'database_pool_waiting',
      'Calls waiting for a database connection, by pool (pipeline: statements queued behind another one)',
      (stats) => stats.waiting,
    );
  }
}
