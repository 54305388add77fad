import { connect } from 'node:net';
import { parseRawResponse, type RawResponse } from './http.js';

/** How a connection ended: the server closed it cleanly (FIN), or a socket error (ECONNRESET for an RST) ended it. */
export type ConnectionEnd = { kind: 'fin' } | { kind: 'error'; code: string };

/** A raw keep-alive TCP connection to a server, which reads the responses on it one after another. */
export interface RawConnection {
  /**
   * Writes raw bytes (one or more requests, or a part of one) at once; resolves when they have been handed to the
   * kernel, or have failed to be (a write error shows in `ended`).
   */
  write(payload: string): Promise<void>;
  /**
   * The next complete response on the connection (framed by its content-length); rejects if the connection ends
   * before it is complete, or after `timeoutMs`.
   */
  nextResponse(timeoutMs?: number): Promise<RawResponse>;
  /** Resolves when the connection has ended, with how it ended; it never rejects. */
  ended: Promise<ConnectionEnd>;
  destroy(): void;
}

/** The length of the first complete response in `received` (head and body), or undefined if none is complete. */
function completeResponseLength(received: Buffer): number | undefined {
  const end = received.indexOf('\r\n\r\n');
  if (end === -1) {
    return undefined;
  }
  const head = received.subarray(0, end).toString('latin1');
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  return received.length >= end + 4 + length ? end + 4 + length : undefined;
}

/** Opens a raw TCP connection to the server of `baseUrl`; resolves once it is established. */
export async function openRawConnection(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });

  let received = Buffer.alloc(0);
  let end: ConnectionEnd | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) {
      waiter();
    }
  };
  const ended = new Promise<ConnectionEnd>((resolve) => {
    socket.on('end', () => {
      end ??= { kind: 'fin' };
      resolve(end);
      wake();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      end ??= { kind: 'error', code: error.code ?? error.message };
      resolve(end);
      wake();
    });
  });
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    wake();
  });

  const nextResponse = (timeoutMs = 10_000) =>
    new Promise<RawResponse>((resolve, reject) => {
      const check = () => {
        const length = completeResponseLength(received);
        if (length !== undefined) {
          finish();
          const response = received.subarray(0, length);
          received = received.subarray(length);
          resolve(parseRawResponse(response.toString('utf8')));
        } else if (end) {
          finish();
          const kind = end.kind === 'fin' ? 'closed' : `ended by ${end.code}`;
          reject(new Error(`connection ${kind} before a complete response; got: ${received.toString('latin1')}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no complete response within ${timeoutMs} ms; got: ${received.toString('latin1')}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  return {
    write: (payload) =>
      new Promise<void>((resolve) => {
        socket.write(payload, () => resolve());
      }),
    nextResponse,
    ended,
    destroy: () => socket.destroy(),
  };
}

/** The bytes of a keep-alive HTTP/1.1 request, with a content-length when it has a body. */
export function rawRequest(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) {
    lines.push(`${name}: ${value}`);
  }
  if (body !== undefined) {
    lines.push(`content-length: ${Buffer.byteLength(body)}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
