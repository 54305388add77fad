import { describeLocation, openMigratedStore, redactUrl } from '@apikeys/store';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { RequestLimiter } from './rate-limits/request-limiter.js';
import { listen, shutdown } from './server.js';

/** Starts the server: configuration, store, migrations, app, listen, and a graceful shutdown on signals. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const { store, applied, warnings } = await openMigratedStore(config.database, {
    poolSize: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
  });
  logger.info({ database: describeLocation(config.database), migrations_applied: applied }, 'store ready');
  for (const warning of warnings) {
    logger.warn({ database: describeLocation(config.database) }, warning);
  }

  const { rateLimits } = config;
  const limiter = new RequestLimiter(rateLimits, logger);
  logger.info(
    {
      per_minute: rateLimits.perMinute || 'off',
      burst: rateLimits.burst,
      auth_failures_per_minute: rateLimits.authFailuresPerMinute || 'off',
      shared_in: rateLimits.redisUrl ? redactUrl(rateLimits.redisUrl) : 'memory (this process)',
    },
    'rate limits',
  );

  const app = createApp({ store, logger, limiter });
  const server = await listen(app, { port: config.port, host: config.host, logger });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ url: `http://${config.host}:${port}` }, 'listening');
  // Whoever waits for this line (an operator, a supervisor) sees it now rather than with the next buffer.
  logger.flush();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    logger.flush();
    await shutdown(server, config.shutdownGraceMs);
    await Promise.all([store.close(), limiter.close()]);
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`apikeys-server: ${message}\n`);
  process.exit(error instanceof ConfigError ? 78 : 1);
});
