import { describeLocation, openMigratedStore, redactUrl } from '@apikeys/store';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { Readiness } from './health/readiness.js';
import { createLogger, logDestination } from './logger.js';
import { instrumentStore } from './metrics/instrument-store.js';
import { Metrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { RequestLimiter } from './rate-limits/request-limiter.js';
import { listen, shutdown } from './server.js';
import { logStartupHints } from './startup-hints.js';
import { startKeyCache } from './verification/key-cache.js';
import { UsageRecorder } from './verification/usage-recorder.js';

/** Starts the server: configuration, store, migrations, app, listen, and a graceful shutdown on signals. */
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
    auditTrail: config.auditTrail,
  });
  logger.info({ database: describeLocation(config.database), migrations_applied: applied }, 'store ready');
  if (!config.auditTrail) {
    logger.warn('AUDIT_TRAIL=off: changes are not recorded in the audit trail (meant only for benchmarks)');
  }
  for (const warning of warnings) {
    logger.warn({ database: describeLocation(config.database) }, warning);
  }
  const metrics = config.metrics && new Metrics();
  const store = metrics ? instrumentStore(openedStore, metrics) : openedStore;

  const { rateLimits, trustProxy } = config;
  const limiter = new RequestLimiter(rateLimits, logger, metrics);
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

  const keyCache = await startKeyCache(store, config.keyCache, logger);
  const usage = new UsageRecorder(store, logger);
  usage.start();
  const readiness = new Readiness(store, { deadlineMs: config.databaseTimeoutMs });
  const app = createApp({ store, logger, limiter, readiness, metrics, keyCache: keyCache.cache, usage, trustProxy });
  const metricsServer =
    config.metrics && metrics && (await startMetricsServer({ ...config.metrics, registry: metrics.registry }));
  if (metricsServer) {
    logger.info({ url: metricsServer.url }, 'metrics listening');
  }
  const server = await listen(app, { port: config.port, host: config.host, logger, readiness });

  // In place before the `listening` line: whoever reads it may send a signal at once.
  let stopping = false;
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
    await shutdown(server, config.shutdownGraceMs);
    await Promise.all([keyCache.stop(), usage.stop()]);
    await Promise.all([store.close(), limiter.close(), metricsServer?.close()]);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { url: `http://${config.host}:${port}`, store: config.database.kind, database: describeLocation(config.database) },
    'listening',
  );
  // Not awaited: a hint never delays the start.
  void logStartupHints(store, logger);
  // Whoever waits for this line (an operator, a supervisor) sees it now rather than with the next buffer.
  logger.flush();
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`apikeys-server: ${message}\n`);
  process.exit(error instanceof ConfigError ? 78 : 1);
});
