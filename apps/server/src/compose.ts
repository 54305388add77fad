import type { Store } from '@apikeys/store';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import {
  type ChangeFeedSettings,
  DEFAULT_CHANGE_FEED,
  type KeyChangeFeed,
  startKeyChangeFeed,
} from './change-feed/key-change-feed.js';
import type { Clock } from './clock.js';
import { Readiness } from './health/readiness.js';
import type { TrustProxy } from './http/trust-proxy.js';
import { instrumentStore } from './metrics/instrument-store.js';
import type { Metrics } from './metrics/metrics.js';
import { type RateLimitSettings, RequestLimiter } from './rate-limits/request-limiter.js';
import { type KeyCacheSettings, startKeyCache } from './verification/key-cache.js';
import { UsageRecorder } from './verification/usage-recorder.js';

/** What the server is built from: an opened, migrated store, and the settings of the parts around it. */
export interface CompositionInputs {
  store: Store;
  logger: Logger;
  /** Where the app, the store and the limiter record; nothing is recorded when not given. */
  metrics?: Metrics | undefined;
  /** Rate limits per admin key and per failing address; no limiter when not given. */
  rateLimits?: RateLimitSettings | undefined;
  /** The verification cache's settings (`maxEntries: 0`: no cache). */
  keyCache: KeyCacheSettings;
  /** The change feed's bounds; those of `DEFAULT_CHANGE_FEED` that are not given. */
  changeFeed?: Partial<ChangeFeedSettings> | undefined;
  /** The longest `/ready` waits for the database; `Readiness`'s own deadline when not given. */
  readinessDeadlineMs?: number | undefined;
  /** Whose `X-Forwarded-For` gives a request's client address. */
  trustProxy?: TrustProxy | undefined;
  /** The admin console's build output to serve; `apps/console/dist` when not given. */
  consoleDirectory?: string | undefined;
  /** What the handlers read the moment of a request from; the wall clock when not given. */
  clock?: Clock | undefined;
  /**
   * Whether the uses of keys are written on a timer (a server), or only when `usage.flush()` is called and at the
   * end (a test, which decides when).
   */
  writeUsageOnTimer: boolean;
}

/** The server's parts, wired once: the app, and what its owner stops and closes when it shuts down. */
export interface ComposedServer {
  app: Express;
  /** The store as the app uses it (instrumented when there are metrics). */
  store: Store;
  readiness: Readiness;
  usage: UsageRecorder;
  /** The change feed, whose subscriptions `endSubscriptions` ends. */
  changeFeed: KeyChangeFeed;
  /**
   * Ends the change feed's subscriptions and refuses new ones: before the connections drain, which would otherwise
   * wait for these long responses until the grace period ends.
   */
  endSubscriptions(): void;
  /** Stops the key cache's listening and writes the uses of keys noted so far; the store stays open. */
  stopBackgroundWork(): Promise<void>;
  /** Closes the store and the limiter; after `stopBackgroundWork`, once no request is served any more. */
  closeConnections(): Promise<void>;
}

/**
 * Wires the server, the same way for `main.ts` and for the tests: the store (instrumented when there are metrics),
 * the rate limiter, the key cache, the usage recorder, readiness, and the app over them. It binds no port.
 */
export async function composeServer(inputs: CompositionInputs): Promise<ComposedServer> {
  const { logger, metrics } = inputs;
  const store = metrics ? instrumentStore(inputs.store, metrics) : inputs.store;
  const limiter = inputs.rateLimits && new RequestLimiter(inputs.rateLimits, logger, metrics);
  // The key cache listens to the store's changes before the change feed does, so it hears each one first: it has
  // forgotten a changed key before a gateway, told by the feed, asks about it again.
  const keyCache = await startKeyCache(store, inputs.keyCache, logger);
  const changeFeed = await startKeyChangeFeed(store, { ...DEFAULT_CHANGE_FEED, ...inputs.changeFeed }, logger, metrics);
  metrics?.watchSubscriptions(() => changeFeed.feed.size);
  const usage = new UsageRecorder(store, logger, { counters: metrics });
  if (inputs.writeUsageOnTimer) {
    usage.start();
  }
  const readiness = new Readiness(store, { deadlineMs: inputs.readinessDeadlineMs });
  const app = createApp({
    store,
    logger,
    limiter,
    readiness,
    metrics,
    keyCache: keyCache.cache,
    usage,
    changeFeed: changeFeed.feed,
    consoleDirectory: inputs.consoleDirectory,
    trustProxy: inputs.trustProxy,
    clock: inputs.clock,
  });
  return {
    app,
    store,
    readiness,
    usage,
    changeFeed: changeFeed.feed,
    endSubscriptions: () => changeFeed.feed.close(),
    async stopBackgroundWork() {
      await Promise.all([keyCache.stop(), changeFeed.stop(), usage.stop()]);
    },
    async closeConnections() {
      await Promise.all([store.close(), limiter?.close()]);
    },
  };
}
