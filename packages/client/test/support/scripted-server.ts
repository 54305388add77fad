import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the scripted server received it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** `performance.now()` when the request arrived. */
  at: number;
}

/** What the server does with a request: answer it, never answer it, or drop the connection. */
export type Action =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { hang: true }
  | { destroy: true };

/** A tiny HTTP server answering from a script, recording every request it receives. */
export interface ScriptedServer {
  baseUrl: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** An API error body, as the contract shapes it. */
export function errorBody(type: string, message: string, requestId = 'req_scriptedscriptedscripte') {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

function reply(response: ServerResponse, action: { status: number; headers?: Record<string, string>; body?: unknown }) {
  const text =
    action.body === undefined ? '' : typeof action.body === 'string' ? action.body : JSON.stringify(action.body);
  response.writeHead(action.status, {
    'content-type': typeof action.body === 'string' ? 'text/html' : 'application/json',
    'request-id': `req_scripted${String(action.status).padStart(12, '0')}`,
    ...action.headers,
  });
  response.end(text);
}

/**
 * Starts the server on a free port. `script` picks the action for the n-th request (0-based); past the end of an
 * array, its last action repeats.
 */
export async function startScriptedServer(
  script: Action[] | ((index: number, request: ReceivedRequest) => Action),
): Promise<ScriptedServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      const index = requests.push(received) - 1;
      const action =
        typeof script === 'function' ? script(index, received) : script[Math.min(index, script.length - 1)];
      if (action === undefined || 'hang' in action) {
        return;
      }
      if ('destroy' in action) {
        request.socket.destroy();
        return;
      }
      reply(response, action);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
