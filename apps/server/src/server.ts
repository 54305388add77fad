import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { warmUp } from './app.js';
import type { Readiness } from './health/readiness.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { answerClientError, answerConnect } from './http/parser-level-answers.js';

/** Timeouts that keep a slow or stalled client from holding a connection for long. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

const drains = new WeakMap<Server, ConnectionDrain>();

/**
 * Binds the port and resolves once it is bound: from then on the server accepts connections and serves requests,
 * before its operations are warm (see `warmUpAndMarkStarted`). Port 0 picks a free port (see `server.address()`).
 */
export async function listen(app: Express, options: { port: number; host: string; logger: Logger }): Promise<Server> {
  // Express answers a missing Host itself, in the API's shape (see checkRequestFraming).
  const server = createServer({ requireHostHeader: false }, app);
  // Every header reaches the app (a dropped content-length would misframe the body); the header size limit of
  // 16 KiB bounds their number.
  server.maxHeadersCount = 0;
  const drain = new ConnectionDrain(server);
  drains.set(server, drain);
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.on(
    'clientError',
    answerClientError(options.logger, (socket) => drain.lastPendingResponse(socket)),
  );
  server.on('connect', answerConnect(options.logger));
  // An `Expect` other than 100-continue is ignored (RFC 9110 allows it) rather than answered with a bare 417.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Warms up every operation of the app (see `warmUpOperations`), then marks `readiness` started: `/ready` may answer
 * 200 from then on. Requests that come meanwhile are served, and pay for what is not warm yet. Once `signal` aborts
 * (the server is stopping), it sends no further warm-up request and does not mark `readiness` started.
 */
export async function warmUpAndMarkStarted(
  app: Express,
  options: { logger: Logger; readiness?: Readiness | undefined; signal?: AbortSignal },
): Promise<void> {
  const report = await warmUp(app, options.signal);
  // Each request must reach the validator as its operation; a 503 is the readiness probe before the start is over.
  const failed = report.filter(({ operationId, validatedAs, status }) => validatedAs !== operationId || status === 500);
  if (failed.length > 0) {
    options.logger.warn({ failed }, 'warm-up: some operations did not answer as expected');
  }
  if (!options.signal?.aborted) {
    options.readiness?.markStarted();
  }
}

/**
 * Stops accepting connections and resolves once every connection has closed: requests in flight, and requests
 * already received but not yet read, get their responses with `Connection: close`; idle keep-alive connections are
 * closed cleanly; any connection still open after `graceMs` is destroyed. See `ConnectionDrain`.
 */
export async function shutdown(server: Server, graceMs: number): Promise<void> {
  const drain = drains.get(server);
  if (!drain) {
    throw new TypeError('shutdown() takes a server that listen() started');
  }
  await drain.drain(graceMs);
}
