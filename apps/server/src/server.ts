import { createServer, type Server } from 'node:http';
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

/** Starts listening; resolves once the port is bound. Port 0 picks a free port (see `server.address()`). */
export async function listen(app: Express, options: { port: number; host: string; logger: Logger }): Promise<Server> {
  const server = createServer(app);
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
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  timer.unref();
  await closed;
  clearTimeout(timer);
}
