import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

/** A response with its body read as text and, when it is JSON, parsed. */
export interface TextResponse {
  response: Response;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  text: string;
}

/** fetch, with the body read as text and parsed as JSON when it is. */
export async function fetchText(url: string, init: RequestInit = {}): Promise<TextResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { response, body, text };
}

/** A parsed raw HTTP response. */
export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** Splits a raw HTTP/1.1 response (without chunked encoding) into status, headers and body. */
export function parseRawResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? '' : raw.slice(end + 4);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
  }
  return { status: match?.[1] ? Number(match[1]) : 0, headers, body };
}

/** Writes raw bytes to a server and resolves with everything it answers before closing the connection. */
export function sendRaw(baseUrl: string, payload: string | Buffer, timeoutMs = 5000): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString('latin1')}`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      // The server may reset the connection after answering: what arrived before is the answer.
      if (chunks.length > 0) {
        resolve(Buffer.concat(chunks).toString('utf8'));
      } else {
        reject(error);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** A port of 127.0.0.1 on which nothing listens: one the system just handed out, closed again. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
