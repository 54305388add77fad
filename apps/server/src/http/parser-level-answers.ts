import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorResponse } from '@apikeys/api-types';
import type { Logger } from 'pino';
import { newRequestId } from './request-id.js';

/**
 * Writes an error in the API's shape straight to a socket and closes it: the answer to a request that Node handles
 * before Express could (a request line or headers its parser refuses, a CONNECT), which would otherwise get a bare
 * status line or nothing at all.
 */
function writeRawError(socket: Duplex, status: string, message: string, logger: Logger, code?: string): void {
  const requestId = newRequestId();
  const body: ErrorResponse = {
    type: 'error',
    error: { type: 'invalid_request_error', message },
    request_id: requestId,
  };
  const json = JSON.stringify(body);
  logger.info({ request_id: requestId, status: Number.parseInt(status, 10), code }, 'client error');
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n` +
      `request-id: ${requestId}\r\nconnection: close\r\n\r\n${json}`,
  );
}

/**
 * Answers what Node's HTTP parser refuses (a malformed request line, oversized headers). When the bad bytes follow
 * a request whose response is still on its way (junk after a pipelined request, a body longer than its
 * content-length), that response is delivered first and the connection then closes: Node's parser cannot go on.
 */
export function answerClientError(logger: Logger, pendingResponse: (socket: Duplex) => ServerResponse | undefined) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const pending = pendingResponse(socket);
    if (pending) {
      pending.shouldKeepAlive = false;
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    writeRawError(
      socket,
      status,
      tooLarge ? 'request headers are too large' : 'malformed HTTP request',
      logger,
      error.code,
    );
  };
}

/** Answers a CONNECT, which Node hands to no request handler: this API is no proxy. */
export function answerConnect(logger: Logger) {
  return (_req: IncomingMessage, socket: Duplex): void => {
    writeRawError(socket, '400 Bad Request', 'method CONNECT is not supported: this API is not a proxy', logger);
  };
}
