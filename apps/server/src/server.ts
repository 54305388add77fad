import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorResponse } from '@apikeys/api-types';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { newRequestId } from './http/request-id.js';

/** Timeouts that keep a slow or stalled client from holding a connection for long. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Answers requests that Node's HTTP parser rejects before Express sees them (malformed request lines, oversized
 * headers) with the API's error shape instead of a bare status line.
 */
function answerClientError(logger: Logger) {
  return (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const requestId = newRequestId();
    const body: ErrorResponse = {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: tooLarge ? 'request headers are too large' : 'malformed HTTP request',
      },
      request_id: requestId,
    };
    const json = JSON.stringify(body);
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    logger.info({ request_id: requestId, status: Number.parseInt(status, 10), code: error.code }, 'client error');
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n` +
        `request-id: ${requestId}\r\nconnection: close\r\n\r\n${json}`,
    );
  };
}

/** What a shutdown needs to know about a server: whether it is stopping, and the responses still in flight. */
interface ConnectionState {
  stopping: boolean;
  inFlight: Set<ServerResponse>;
}
const connectionStates = new WeakMap<Server, ConnectionState>();

/** Starts listening; resolves once the port is bound. Port 0 picks a free port (see `server.address()`). */
export async function listen(app: Express, options: { port: number; host: string; logger: Logger }): Promise<Server> {
  const server = createServer(app);
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
  server.on('clientError', answerClientError(options.logger));
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
