import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorResponse } from '@apikeys/api-types';
import type { Logger } from 'pino';
import { newRequestId } from './request-id.js';

/** The API's error shape for a request refused before Express could read it. */
function errorBody(message: string, requestId: string): ErrorResponse {
  return { type: 'error', error: { type: 'invalid_request_error', message }, request_id: requestId };
}

/**
 * Writes an error in the API's shape straight to a socket and closes it: the answer to a request that Node handles
 * before Express could (a request line or headers its parser refuses, a CONNECT), which would otherwise get a bare
 * status line or nothing at all.
 */
function writeRawError(socket: Duplex, status: string, message: string, logger: Logger, code?: string): void {
  const requestId = newRequestId();
  const json = JSON.stringify(errorBody(message, requestId));
  logger.info({ request_id: requestId, status: Number.parseInt(status, 10), code }, 'client error');
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n` +
      `request-id: ${requestId}\r\nconnection: close\r\n\r\n${json}`,
  );
}

/** Responses answered here while their pipeline still runs: whatever it raises later has nowhere to go. */
const answeredEarly = new WeakSet<ServerResponse>();

/** Whether the response was answered here, with the pipeline of its request still running. */
export function wasAnsweredEarly(res: ServerResponse): boolean {
  return answeredEarly.has(res);
}

/** The status and message of what the parser refused: the headers (or trailers) are too large, or malformed. */
function describeRefusal(error: Error & { code?: string }, inBody: boolean): { status: string; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: '431 Request Header Fields Too Large', message: 'request headers are too large' };
  }
  return {
    status: '400 Bad Request',
    message: inBody
      ? 'malformed request body: its chunked framing (transfer-encoding) is invalid'
      : 'malformed HTTP request',
  };
}

/**
 * Answers a request whose body the parser refused part way (a chunk size that is not hexadecimal, a chunk without
 * its CRLF): its body will never end, so the pipeline reading it would wait for the request timeout. The answer goes
 * through the request's own response, so that it keeps its request ID and follows the responses pipelined before it;
 * the connection closes after it, and the body read so far is never handed to an operation.
 */
function answerBrokenBody(res: ServerResponse, socket: Duplex, error: Error & { code?: string }, logger: Logger): void {
  answeredEarly.add(res);
  if (res.headersSent) {
    // Answered already, before its body was read: nothing is left to say, and the parser cannot go on.
    res.once('finish', () => socket.end());
    return;
  }
  const assigned = res.getHeader('request-id');
  const requestId = typeof assigned === 'string' ? assigned : newRequestId();
  const { status, message } = describeRefusal(error, true);
  const json = JSON.stringify(errorBody(message, requestId));
  logger.info({ request_id: requestId, status: Number.parseInt(status, 10), code: error.code }, 'client error');
  res.shouldKeepAlive = false;
  res.statusCode = Number.parseInt(status, 10);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(json));
  res.setHeader('request-id', requestId);
  res.end(json);
}

/**
 * Answers what Node's HTTP parser refuses (a malformed request line, oversized headers, a broken chunked body).
 * When the bad bytes follow a request whose response is still on its way (junk after a pipelined request, a body
 * longer than its content-length), that response is delivered first and the connection then closes: Node's parser
 * cannot go on.
 */
export function answerClientError(logger: Logger, pendingResponse: (socket: Duplex) => ServerResponse | undefined) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const pending = pendingResponse(socket);
    if (pending && answeredEarly.has(pending)) {
      return;
    }
    if (pending && !pending.req.complete) {
      answerBrokenBody(pending, socket, error, logger);
      return;
    }
    if (pending) {
      pending.shouldKeepAlive = false;
      return;
    }
    const { status, message } = describeRefusal(error, false);
    writeRawError(socket, status, message, logger, error.code);
  };
}

/** Answers a CONNECT, which Node hands to no request handler: this API is no proxy. */
export function answerConnect(logger: Logger) {
  return (_req: IncomingMessage, socket: Duplex): void => {
    writeRawError(socket, '400 Bad Request', 'method CONNECT is not supported: this API is not a proxy', logger);
  };
}
