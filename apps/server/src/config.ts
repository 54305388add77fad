import {
  DEFAULT_SQLITE_PATH,
  DEFAULT_TIMEOUT_MS,
  parseDatabaseUrl,
  redactUrl,
  type StoreLocation,
} from '@apikeys/store';
import { z } from 'zod';
import { type ChangeFeedSettings, DEFAULT_CHANGE_FEED } from './change-feed/key-change-feed.js';
import { parseTrustProxy, type TrustProxy } from './http/trust-proxy.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './logger.js';
import type { RateLimitSettings } from './rate-limits/request-limiter.js';
import { DEFAULT_KEY_CACHE, type KeyCacheSettings } from './verification/key-cache.js';

/** The server's configuration, parsed once from the environment at start. */
export interface Config {
  port: number;
  host: string;
  database: StoreLocation;
  /** Connections in the PostgreSQL pool (ignored by SQLite). */
  databasePoolSize: number;
  /** The deadline of every database call; past it a request gets 503. */
  databaseTimeoutMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /**
   * How long, after SIGTERM, the server keeps serving while `/ready` answers 503, so that load balancers stop sending
   * it requests before it stops accepting connections.
   */
  shutdownDelayMs: number;
  /** How long a graceful shutdown waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
  /** Where Prometheus metrics are served, on a listener of their own; undefined when metrics are off. */
  metrics: { port: number; host: string } | undefined;
  rateLimits: RateLimitSettings;
  /**
   * Which proxies' `X-Forwarded-For` give a request's client address (`req.ip`): the address failed
   * authentications are limited by and audit events record. 0, the default, trusts none.
   */
  trustProxy: TrustProxy;
  /** What verification remembers of keys (see KeyCache). */
  keyCache: KeyCacheSettings;
  /** The bounds of the change feed (see KeyChangeFeed). */
  changeFeed: ChangeFeedSettings;
}

/** A configuration value that cannot be used; the message tells the operator which and why. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

// A blank variable counts as unset, so `PORT=` falls back to the default instead of meaning 0.
const unsetIfEmpty = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** A whole number written in plain decimal digits (no sign, exponent or hex), within [min, max]. */
const wholeNumber = (min: number, max: number) =>
  z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(unsetIfEmpty, wholeNumber(min, max).default(fallback));
const optionalInteger = (min: number, max: number) => z.preprocess(unsetIfEmpty, wholeNumber(min, max).optional());
/** TRUST_PROXY (see `parseTrustProxy`); unset trusts no proxy. */
const trustProxy = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .optional()
    .transform((text, context): TrustProxy => {
      try {
        return text === undefined ? 0 : parseTrustProxy(text);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
);

const EnvSchema = z.object({
  PORT: integer(0, 65535, 8080),
  HOST: z.preprocess(unsetIfEmpty, z.string().default('127.0.0.1')),
  DATABASE_URL: z.preprocess(unsetIfEmpty, z.string().optional()),
  DATABASE_POOL_SIZE: integer(1, 1000, 10),
  DATABASE_TIMEOUT_MS: integer(100, 600_000, DEFAULT_TIMEOUT_MS),
  LOG_LEVEL: z.preprocess(unsetIfEmpty, z.enum(LOG_LEVELS).default('info')),
  LOG_FORMAT: z.preprocess(unsetIfEmpty, z.enum(LOG_FORMATS).default('auto')),
  SHUTDOWN_DELAY_MS: integer(0, 600_000, 0),
  SHUTDOWN_GRACE_MS: integer(0, 600_000, 10_000),
  METRICS_PORT: optionalInteger(0, 65535),
  METRICS_HOST: z.preprocess(unsetIfEmpty, z.string().default('127.0.0.1')),
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000_000, 1200),
  RATE_LIMIT_BURST: integer(1, 1_000_000_000, 100),
  AUTH_FAILURE_LIMIT_PER_MINUTE: integer(0, 1_000_000, 30),
  TRUST_PROXY: trustProxy,
  VERIFY_CACHE_MAX_KEYS: integer(0, 10_000_000, DEFAULT_KEY_CACHE.maxEntries),
  VERIFY_CACHE_TTL_SECONDS: integer(1, 86_400, DEFAULT_KEY_CACHE.ttlMs / 1000),
  VERIFY_CACHE_NOT_FOUND_TTL_SECONDS: integer(1, 3_600, DEFAULT_KEY_CACHE.negativeTtlMs / 1000),
  CHANGE_FEED_MAX_SUBSCRIPTIONS: integer(0, 1_000_000, DEFAULT_CHANGE_FEED.maxSubscriptions),
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_KEY: integer(1, 1_000_000, DEFAULT_CHANGE_FEED.maxPerCredential),
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_ORGANIZATION: integer(1, 1_000_000, DEFAULT_CHANGE_FEED.maxPerOrganization),
  CHANGE_FEED_MAX_LIFETIME_SECONDS: integer(10, 86_400, DEFAULT_CHANGE_FEED.maxLifetimeMs / 1000),
  REDIS_URL: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^rediss?:\/\/\S+$/)
      .optional(),
  ),
});

/** The name of an environment variable the server reads. */
export type ConfigVariable = keyof z.infer<typeof EnvSchema>;

/**
 * What an operator reads about a variable. docs/operations.md's configuration table is generated from these
 * (`pnpm --filter @apikeys/server docs:config`), and a test fails when the table and this file disagree.
 */
export interface ConfigVariableDoc {
  /** What the variable must hold: the table's "Accepts", and the words of the error on a bad value. */
  accepts: string;
  /** What it does (Markdown, links relative to docs/). */
  meaning: string;
  /** The table's default when an unset variable leaves no value. */
  unset?: string;
}

export const CONFIG_VARIABLES: Record<ConfigVariable, ConfigVariableDoc> = {
  PORT: {
    accepts: 'an integer from 0 to 65535',
    meaning: 'TCP port of the API (`0` picks a free one; the `listening` line says which)',
  },
  HOST: { accepts: 'a host name or IP address', meaning: 'interface of the API (`0.0.0.0` for all)' },
  DATABASE_URL: {
    accepts: 'file:<path> or postgres://...',
    meaning:
      'the database: SQLite for `file:` (a relative path is resolved from the folder the command ran in), ' +
      'PostgreSQL for `postgres://user:password@host:5432/db` (also `postgresql://`)',
    unset: `\`${DEFAULT_SQLITE_PATH}\``,
  },
  DATABASE_POOL_SIZE: {
    accepts: 'an integer from 1 to 1000',
    meaning:
      'PostgreSQL connections per server process for requests, at most (pipelined: one more opens only when each ' +
      'has 8 statements waiting); two more pools of as many serve other calls and migrations: plan for 3× ' +
      '([scaling](scaling.md)). SQLite has one connection',
  },
  DATABASE_TIMEOUT_MS: {
    accepts: 'a whole number of milliseconds from 100 to 600000',
    meaning:
      'the deadline of every database call (connecting, waiting for a connection or a SQLite lock, each ' +
      'statement); past it the request gets `503` with `retry-after`',
  },
  LOG_LEVEL: {
    accepts: `one of ${LOG_LEVELS.join(', ')}`,
    meaning: 'the least severe lines written (`silent` writes none)',
  },
  LOG_FORMAT: {
    accepts: `one of ${LOG_FORMATS.join(', ')} (auto: human-readable on a terminal, JSON otherwise)`,
    meaning: '`pretty` is human-readable; `auto` is pretty when standard output is a terminal, JSON otherwise',
  },
  SHUTDOWN_DELAY_MS: {
    accepts: 'a whole number of milliseconds',
    meaning:
      'after SIGTERM or SIGINT, how long the server keeps serving while `/ready` answers `503`, so that load ' +
      'balancers take it out first ([Shutting down](#shutting-down))',
  },
  SHUTDOWN_GRACE_MS: {
    accepts: 'a whole number of milliseconds',
    meaning: 'then, how long it waits for in-flight requests before closing the connections left',
  },
  METRICS_PORT: {
    accepts: 'an integer from 0 to 65535 (unset turns metrics off)',
    meaning:
      'port of the Prometheus metrics, on a listener of their own, e.g. `9464` (`0` picks a free one; the ' +
      '`metrics listening` line says which) ([Metrics](#metrics))',
    unset: '(unset: off)',
  },
  METRICS_HOST: {
    accepts: 'a host name or IP address',
    meaning: 'interface of the metrics listener: loopback unless you open it on purpose',
  },
  RATE_LIMIT_PER_MINUTE: {
    accepts: 'a whole number of requests a minute (0 turns rate limiting off)',
    meaning: 'requests a minute per admin key',
  },
  RATE_LIMIT_BURST: {
    accepts: 'a whole number of requests from 1',
    meaning: 'requests an admin key may send at once (its budget refills at `RATE_LIMIT_PER_MINUTE`)',
  },
  AUTH_FAILURE_LIMIT_PER_MINUTE: {
    accepts: 'a whole number of failures a minute (0 turns the limit off)',
    meaning:
      'failed authentications a minute per client address before it gets `429` instead of `401`; a valid admin ' +
      'key is never refused because of failures',
  },
  TRUST_PROXY: {
    accepts:
      "a number of proxy hops from 0 to 100, or a comma-separated list of the proxies' addresses and subnets " +
      '(10.0.0.5, 10.0.0.0/8, loopback)',
    meaning:
      "the proxies whose `X-Forwarded-For` gives the client's address, for the failed-authentication limit and " +
      "the audit trail; `0` trusts none: the client is the connection's peer ([deploy.md](deploy.md))",
  },
  REDIS_URL: {
    accepts: 'redis://[user:password@]host:port[/db] or rediss://...',
    meaning:
      'shares the rate limits between replicas; unset, each process counts in its own memory. If Redis fails, ' +
      'requests are served unlimited: each process warns when it lets the first one through (then at most once a ' +
      'minute) and counts them in `apikeys_rate_limit_unlimited_requests_total`',
    unset: '(unset: per process)',
  },
  VERIFY_CACHE_MAX_KEYS: {
    accepts: 'a whole number of secrets from 0 to 10000000 (0 turns the verification cache off)',
    meaning:
      "secrets each process remembers for `POST /v1/keys/verify`, and as many callers' admin and verifier keys " +
      "(least recently used forgotten first). A change to a key reaches every process's cache at once " +
      "(PostgreSQL notifications; on SQLite, another process's change clears it within 0.2 s) " +
      '([Verification](#verification-and-the-key-cache))',
  },
  VERIFY_CACHE_TTL_SECONDS: {
    accepts: 'a whole number of seconds from 1 to 86400',
    meaning: 'how long a found key is trusted without hearing of a change: the net under lost notifications',
  },
  VERIFY_CACHE_NOT_FOUND_TTL_SECONDS: {
    accepts: 'a whole number of seconds from 1 to 3600',
    meaning: 'how long an unknown secret is remembered, so that repeating it does not reach the database',
  },
  CHANGE_FEED_MAX_SUBSCRIPTIONS: {
    accepts: 'an integer from 0 to 1000000',
    meaning:
      'change feed subscriptions (`GET /v1/keys/changes`, one per connected gateway) this process holds at most; ' +
      'past it, a new one is refused with `503` and `retry-after`. Each holds a connection, about 30 KB of memory ' +
      'and up to 64 KiB of unread events ([the change feed](operations.md#the-change-feed))',
  },
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_KEY: {
    accepts: 'an integer from 1 to 1000000',
    meaning:
      'change feed subscriptions one admin or verifier key may hold in this process (a gateway holds one, two ' +
      'for a few seconds when it renews it); past it, a new one is refused with `429` and `retry-after`',
  },
  CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_ORGANIZATION: {
    accepts: 'an integer from 1 to 1000000',
    meaning:
      "change feed subscriptions one organization's keys may hold together in this process, so that no " +
      'organization can take the feed from the others; past it, a new one is refused with `429` and `retry-after`',
  },
  CHANGE_FEED_MAX_LIFETIME_SECONDS: {
    accepts: 'a whole number of seconds from 10 to 86400',
    meaning:
      'how long a change feed subscription lasts at most (each is shortened by up to a tenth at random); then the ' +
      'server ends it cleanly, and a gateway that subscribed again before keeps what it remembers',
  },
};

/** The value each variable takes when it is unset (undefined for those that then hold none). */
export function configDefaults(): Partial<Record<ConfigVariable, unknown>> {
  return EnvSchema.parse({});
}

/** Parses and validates the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]) as ConfigVariable;
      // A URL may hold a password: it is shown with the password hidden.
      const value = name.endsWith('_URL') ? redactUrl(String(env[name])) : env[name];
      // A custom issue says which part of the value is at fault.
      const why = issue.code === 'custom' ? `: ${issue.message}` : '';
      return `${name} must be ${CONFIG_VARIABLES[name].accepts}${why} (got ${JSON.stringify(value)})`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  let database: StoreLocation;
  try {
    database = parseDatabaseUrl(parsed.data.DATABASE_URL);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
  }
  return {
    port: parsed.data.PORT,
    host: parsed.data.HOST,
    database,
    databasePoolSize: parsed.data.DATABASE_POOL_SIZE,
    databaseTimeoutMs: parsed.data.DATABASE_TIMEOUT_MS,
    logLevel: parsed.data.LOG_LEVEL,
    logFormat: parsed.data.LOG_FORMAT,
    shutdownDelayMs: parsed.data.SHUTDOWN_DELAY_MS,
    shutdownGraceMs: parsed.data.SHUTDOWN_GRACE_MS,
    metrics:
      parsed.data.METRICS_PORT === undefined
        ? undefined
        : { port: parsed.data.METRICS_PORT, host: parsed.data.METRICS_HOST },
    rateLimits: {
      perMinute: parsed.data.RATE_LIMIT_PER_MINUTE,
      burst: parsed.data.RATE_LIMIT_BURST,
      authFailuresPerMinute: parsed.data.AUTH_FAILURE_LIMIT_PER_MINUTE,
      redisUrl: parsed.data.REDIS_URL,
    },
    trustProxy: parsed.data.TRUST_PROXY,
    keyCache: {
      maxEntries: parsed.data.VERIFY_CACHE_MAX_KEYS,
      ttlMs: parsed.data.VERIFY_CACHE_TTL_SECONDS * 1000,
      negativeTtlMs: parsed.data.VERIFY_CACHE_NOT_FOUND_TTL_SECONDS * 1000,
    },
    changeFeed: {
      maxSubscriptions: parsed.data.CHANGE_FEED_MAX_SUBSCRIPTIONS,
      maxPerCredential: parsed.data.CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_KEY,
      maxPerOrganization: parsed.data.CHANGE_FEED_MAX_SUBSCRIPTIONS_PER_ORGANIZATION,
      maxLifetimeMs: parsed.data.CHANGE_FEED_MAX_LIFETIME_SECONDS * 1000,
    },
  };
}
