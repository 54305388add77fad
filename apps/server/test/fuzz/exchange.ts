import { connect } from 'node:net';

/** A complete HTTP response, as read off the socket. */
export interface Answer {
  answered: true;
  /** The status line, e.g. `HTTP/1.1 404 Not Found`. */
  statusLine: string;
  status: number;
  /** Header lines in order, names as sent. */
  headers: [string, string][];
  /** The head as text (status line and header lines), to search for secrets. */
  head: string;
  body: Buffer;
}

/** No complete response: the connection closed or timed out first. */
export interface NoAnswer {
  answered: false;
  reason: string;
  /** Whatever arrived, as text. */
  partial: string;
}

/** Looks up a header of an answer, case-insensitively; several values are joined with ', '. */
export function headerOf(answer: Answer, name: string): string | undefined {
  const values = answer.headers.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value);
  return values.length === 0 ? undefined : values.join(', ');
}

interface Parsed {
  statusLine: string;
  status: number;
  headers: [string, string][];
  head: string;
  body: Buffer;
}

/** The complete chunks of a chunked body so far (an event stream never sends the last one). */
function chunksSoFar(data: Buffer): Buffer {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset, 'latin1');
    const size = Number.parseInt(data.toString('latin1', offset, lineEnd).split(';')[0] ?? '', 16);
    const start = lineEnd + 2;
    if (lineEnd === -1 || Number.isNaN(size) || size === 0 || data.length < start + size + 2) {
      return Buffer.concat(chunks);
    }
    chunks.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** Decodes a chunked body; undefined until the last chunk has arrived. */
function dechunk(data: Buffer): Buffer | undefined {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset, 'latin1');
    if (lineEnd === -1) {
      return undefined;
    }
    const size = Number.parseInt(data.toString('latin1', offset, lineEnd).split(';')[0] ?? '', 16);
    if (Number.isNaN(size)) {
      throw new Error(`malformed chunk size in the response: ${data.toString('latin1', offset, lineEnd)}`);
    }
    const start = lineEnd + 2;
    if (size === 0) {
      // The last chunk is followed by optional trailer lines and an empty line.
      return data.indexOf('\r\n\r\n', lineEnd, 'latin1') === -1 ? undefined : Buffer.concat(chunks);
    }
    if (data.length < start + size + 2) {
      return undefined;
    }
    chunks.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/**
 * Parses the first final response in `data` (skipping interim 1xx responses); undefined while it is incomplete.
 * `closed` says the server closed the connection, which ends a body without length.
 */
function parse(data: Buffer, headRequest: boolean, closed: boolean): Parsed | undefined {
  let start = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', start, 'latin1');
    if (end === -1) {
      return undefined;
    }
    const head = data.toString('latin1', start, end);
    const [statusLine = '', ...lines] = head.split('\r\n');
    const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
    if (status >= 100 && status < 200 && status !== 101) {
      start = end + 4;
      continue;
    }
    const headers = lines.map((line): [string, string] => {
      const colon = line.indexOf(':');
      return colon === -1 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).trim()];
    });
    const rest = data.subarray(end + 4);
    const find = (name: string) => headers.find(([key]) => key.toLowerCase() === name)?.[1];
    if (headRequest || status === 204 || status === 304) {
      return { statusLine, status, headers, head, body: Buffer.alloc(0) };
    }
    if (find('content-type')?.startsWith('text/event-stream')) {
      // A stream does not end: its answer is its first event, once it has arrived whole.
      const chunked = find('transfer-encoding')?.toLowerCase().includes('chunked');
      const text = chunked ? chunksSoFar(rest) : rest;
      const end = text.indexOf('\n\n', 0, 'utf8');
      return end === -1 ? undefined : { statusLine, status, headers, head, body: text.subarray(0, end + 2) };
    }
    if (find('transfer-encoding')?.toLowerCase().includes('chunked')) {
      const body = dechunk(rest);
      return body === undefined ? undefined : { statusLine, status, headers, head, body };
    }
    const length = find('content-length');
    if (length !== undefined) {
      const bytes = Number(length);
      return rest.length < bytes ? undefined : { statusLine, status, headers, head, body: rest.subarray(0, bytes) };
    }
    return closed ? { statusLine, status, headers, head, body: rest } : undefined;
  }
}

/**
 * Sends raw bytes on a new connection and reads the one response, over HTTP/1.1 framing; the connection is closed
 * as soon as the response is complete. Never rejects: a connection closed or timed out without a complete
 * response is a `NoAnswer`, which the fuzzer reports.
 */
export function exchange(
  port: number,
  bytes: Buffer,
  options: { head: boolean; timeoutMs: number; abort?: AbortSignal; host?: string },
): Promise<Answer | NoAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host: options.host ?? '127.0.0.1', port });
    const received: Buffer[] = [];
    let settled = false;
    const finish = (result: Answer | NoAnswer) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        options.abort?.removeEventListener('abort', onAbort);
        socket.destroy();
        resolve(result);
      }
    };
    const noAnswer = (reason: string) =>
      finish({ answered: false, reason, partial: Buffer.concat(received).toString('latin1').slice(0, 2000) });
    const attempt = (closed: boolean) => {
      let parsed: Parsed | undefined;
      try {
        parsed = parse(Buffer.concat(received), options.head, closed);
      } catch (error) {
        noAnswer(`unreadable response: ${(error as Error).message}`);
        return;
      }
      if (parsed) {
        finish({ answered: true, ...parsed });
      } else if (closed) {
        noAnswer('the server closed the connection without a complete response');
      }
    };
    const onAbort = () => noAnswer(`aborted: ${String(options.abort?.reason)}`);
    options.abort?.addEventListener('abort', onAbort);
    const timer = setTimeout(() => noAnswer(`no complete response within ${options.timeoutMs} ms`), options.timeoutMs);
    socket.on('connect', () => {
      // Written in slices, so that a response sent before the whole body (413, 415) can be read meanwhile.
      const slice = 256 * 1024;
      let offset = 0;
      const writeMore = () => {
        while (offset < bytes.length && !settled) {
          const next = bytes.subarray(offset, offset + slice);
          offset += slice;
          if (!socket.write(next)) {
            socket.once('drain', writeMore);
            return;
          }
        }
      };
      writeMore();
    });
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      attempt(false);
    });
    // A reset after the server has answered (it stops reading a body it refuses) still leaves the answer.
    socket.on('error', () => attempt(true));
    socket.on('close', () => attempt(true));
  });
}
