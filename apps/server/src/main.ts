import { describeLocation, openMigratedStore, redactUrl } from '@apikeys/store';
import { composeServer } from './compose.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, logDestination } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { listen, shutdown, warmUpAndMarkStarted } from './server.js';
import { logStartupHints } from './startup-hints.js';

/** Starts the server: configuration, store, migrations, app, signals, listen, warm-up, and a graceful shutdown. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, logDestination(config.logFormat));
  const {
    store: openedStore,
    applied,
    warnings,
  } = await openMigratedStore(config.database, {
    poolSize: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
  });
  logger.info({ database: describeLocation(config.database), migrations_applied: applied }, 'store ready');
  for (const warning of warnings) {
    logger.warn({ database: describeLocation(config.database) }, warning);
  }
  const metrics = config.metrics && new Metrics();
  const { rateLimits, trustProxy } = config;
  logger.info(
    {
      per_minute: rateLimits.perMinute || 'off',
      burst: rateLimits.burst,
      auth_failures_per_minute: rateLimits.authFailuresPerMinute || 'off',
      shared_in: rateLimits.redisUrl ? redactUrl(rateLimits.redisUrl) : 'memory (this process)',
      trust_proxy: trustProxy,
    },
    'rate limits',
  );
  const { app, store, readiness, endSubscriptions, stopBackgroundWork, closeConnections } = await composeServer({
    store: openedStore,
    logger,
    metrics,
    rateLimits,
    keyCache: config.keyCache,
    changeFeed: config.changeFeed,
    readinessDeadlineMs: config.databaseTimeoutMs,
    trustProxy,
    writeUsageOnTimer: true,
  });
  const metricsServer =
    config.metrics && metrics && (await startMetricsServer({ ...config.metrics, registry: metrics.registry }));
  if (metricsServer) {
    logger.info({ url: metricsServer.url }, 'metrics listening');
  }
  // Handled from before the port is bound: a client may connect, and a supervisor signal, as soon as it is.
  let stopping = false;
  const stopWarmingUp = new AbortController();
  let skipDelay: (() => void) | undefined;
  const stop = async (signal: string) => {
    if (stopping) {
      if (skipDelay) {
        logger.info({ signal }, 'shutdown delay skipped');
        skipDelay();
      }
      return;
    }
    stopping = true;
    stopWarmingUp.abort();
    readiness.markDraining();
    logger.info({ signal, delay_ms: config.shutdownDelayMs, grace_ms: config.shutdownGraceMs }, 'shutting down');
    logger.flush();
    // `/ready` fails from now on; until the delay is over, requests (keep-alive included) are served as before, so
    // that load balancers stop sending traffic before the listener closes. A second signal skips the rest.
    if (config.shutdownDelayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, config.shutdownDelayMs);
        skipDelay = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      skipDelay = undefined;
    }
    // A failed bind or warm-up is main's to report: the drain and the clean-up go on without them.
    const server = await bound.catch(() => undefined);
    endSubscriptions();
    if (server) {
      await shutdown(server, config.shutdownGraceMs);
    }
    // The warm-up's requests read the store: the one in flight ends before the store is closed.
    await warmedUp.catch(() => undefined);
    await stopBackgroundWork();
    await Promise.all([closeConnections(), metricsServer?.close()]);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // Both promises exist before a signal can be handled: handlers run from the event loop, after this function yields.
  const bound = listen(app, { port: config.port, host: config.host, logger });
  const warmedUp = bound.then(async (server) => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host}:${port}`;
    logger.info({ url, store: config.database.kind, database: describeLocation(config.database) }, 'listening');
    // Whoever waits for this line (an operator, a supervisor, a test) sees it now rather than with the next buffer.
    logger.flush();
    const warmUpStartedAt = performance.now();
    await warmUpAndMarkStarted(app, { logger, readiness, signal: stopWarmingUp.signal });
    if (stopping) {
      return;
    }
    logger.info({ url, warm_up_ms: Math.round(performance.now() - warmUpStartedAt) }, 'ready');
    // Not awaited: a hint never delays the start.
    void logStartupHints(store, logger);
    logger.flush();
  });
  await warmedUp;
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`apikeys-server: ${message}\n`);
  process.exit(error instanceof ConfigError ? 78 : 1);
});
