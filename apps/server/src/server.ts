import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { answerClientError, answerConnect } from './http/parser-level-answers.js';

/** Timeouts that keep a slow or stalled client from holding a connection for long. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** What a shutdown needs to know about a server: whether it is stopping, and the responses still in flight. */
interface ConnectionState {
  stopping: boolean;
  inFlight: Set<ServerResponse>;
}
const connectionStates = new WeakMap<Server, ConnectionState>();

/** Starts listening; resolves once the port is bound. Port 0 picks a free port (see `server.address()`). */
export async function listen(app: Express, options: { port: number; host: string; logger: Logger }): Promise<Server> {
  // Express answers a missing Host itself, in the API's shape (see checkRequestFraming).
  const server = createServer({ requireHostHeader: false }, app);
  // Every header reaches the app (a dropped content-length would misframe the body); the header size limit of
  // 16 KiB bounds their number.
  server.maxHeadersCount = 0;
  const state: ConnectionState = { stopping: false, inFlight: new Set() };
  connectionStates.set(server, state);
  // During shutdown every response ends its connection instead of keeping it alive, and each connection that
  // falls idle is closed, so `server.close()` never waits for a keep-alive timeout.
  server.on('request', (_req, res) => {
    state.inFlight.add(res);
    res.shouldKeepAlive &&= !state.stopping;
    res.once('finish', () => {
      state.inFlight.delete(res);
      if (state.stopping) {
        server.closeIdleConnections();
      }
    });
    res.once('close', () => state.inFlight.delete(res));
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const pendingResponse = (socket: unknown) => [...state.inFlight].find((res) => res.socket === socket);
  server.on('clientError', answerClientError(options.logger, pendingResponse));
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
 * Stops accepting connections and waits for in-flight requests to finish, closing idle keep-alive connections at
 * once and any connection still open after `graceMs`.
 */
export async function shutdown(server: Server, graceMs: number): Promise<void> {
  const state = connectionStates.get(server);
  if (state) {
    state.stopping = true;
    for (const res of state.inFlight) {
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
      }
    }
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  timer.unref();
  await closed;
  clearTimeout(timer);
}
