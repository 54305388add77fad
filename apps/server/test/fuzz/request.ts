/**
 * The requests the fuzzer sends: plain data with placeholders (`$ADMIN_KEY`, `$KEY_ID`, ...) where the fixture's
 * secrets and IDs go, so that a generated request can be printed, shrunk and replayed against any server.
 */

import { type Bindings, PLACEHOLDERS, type Placeholder } from './placeholders.js';

// Longest first, so that no placeholder is read as the start of another.
const PLACEHOLDER_PATTERN = new RegExp(
  [...PLACEHOLDERS]
    .sort((a, b) => b.length - a.length)
    .map((name) => `\\${name}`)
    .join('|'),
  'g',
);

/** Replaces every placeholder in `text` by its value. */
export function bind(text: string, bindings: Bindings): string {
  return text.replace(PLACEHOLDER_PATTERN, (name) => bindings[name as Placeholder]);
}

/** A piece of a body: text written as UTF-8, or bytes (one character per byte, U+0000 to U+00FF), repeated. */
export interface BodyPart {
  text: string;
  encoding: 'utf8' | 'bytes';
  repeat?: number;
}

/** How the body is framed on the wire. */
export type Framing =
  /** A correct `content-length`. */
  | { kind: 'length' }
  /** `transfer-encoding: chunked`, in chunks of `size` bytes. */
  | { kind: 'chunked'; size: number }
  /** A `content-length` that is `delta` bytes off (negative: the rest of the body follows as extra bytes). */
  | { kind: 'lying-length'; delta: number }
  /** Both `content-length` and `transfer-encoding: chunked`, which HTTP/1.1 forbids. */
  | { kind: 'both' }
  /** `transfer-encoding: chunked`, in one chunk that breaks the chunked coding (RFC 9112, section 7.1). */
  | { kind: 'malformed-chunk'; form: MalformedChunk }
  /** No framing header at all: the body bytes follow the head. */
  | { kind: 'none' };

/** The ways a chunk breaks the chunked coding: each makes the whole body unreadable. */
export const MALFORMED_CHUNKS = {
  'a size that is not hexadecimal': (data: string) => `zz\r\n${data}\r\n0\r\n\r\n`,
  'more data than its size': (data: string) => `1\r\n${data}x\r\n0\r\n\r\n`,
  'no CRLF after the data': (data: string) => `${size(data)}\r\n${data}0\r\n\r\n`,
  'a negative size': (data: string) => `-${size(data)}\r\n${data}\r\n0\r\n\r\n`,
  'a size past 2^64': (data: string) => `1${'0'.repeat(16)}\r\n${data}\r\n0\r\n\r\n`,
  'a control byte in an extension': (data: string) => `${size(data)};\x01\r\n${data}\r\n0\r\n\r\n`,
  'bare LF line ends': (data: string) => `${size(data)}\n${data}\n0\n\n`,
  'a trailer line without a colon': (data: string) => `${size(data)}\r\n${data}\r\n0\r\nx\r\n\r\n`,
} as const;

/** One of the ways a chunk breaks the chunked coding. */
export type MalformedChunk = keyof typeof MALFORMED_CHUNKS;

/** The chunk size of data given one character per byte, in hexadecimal. */
function size(data: string): string {
  return data.length.toString(16);
}

/** One request, as data. */
export interface FuzzRequest {
  /** The family of inputs it comes from and each hostile form applied, for the statistics and the report. */
  labels: string[];
  method: string;
  /** The request-target as sent (one character per byte), with placeholders. */
  target: string;
  /** The protocol of the request line (`HTTP/1.1`), or '' for a request line without one. */
  protocol: string;
  /** Header lines in order, with placeholders; a line of one element has no colon. */
  headers: ([string, string] | [string])[];
  body?: BodyPart[];
  framing: Framing;
  /**
   * False when the request holds a form whose outcome the fuzzer's model of the spec does not predict (an odd
   * method, framing or header): such a request is held to every invariant but the exact expected refusal.
   */
  modelled: boolean;
}

/** The body's bytes, placeholders bound. */
export function bodyBytes(parts: readonly BodyPart[] | undefined, bindings: Bindings): Buffer {
  if (!parts || parts.length === 0) {
    return Buffer.alloc(0);
  }
  return Buffer.concat(
    parts.map((part) => {
      const one = Buffer.from(bind(part.text, bindings), part.encoding === 'utf8' ? 'utf8' : 'latin1');
      return part.repeat === undefined ? one : Buffer.from(one.toString('latin1').repeat(part.repeat), 'latin1');
    }),
  );
}

/**
 * At most this many chunks in a chunked body: a chunk costs Node's parser and stream an event, and a 1 MiB body in
 * 1-byte chunks holds the server busy for ten seconds before the size limit refuses it (a cost reported apart from
 * the fuzzer's invariants); larger bodies are cut in larger chunks.
 */
const MAX_CHUNKS = 16_384;

function chunked(body: Buffer, requested: number): Buffer {
  const size = Math.max(requested, Math.ceil(body.length / MAX_CHUNKS));
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += size) {
    const chunk = body.subarray(offset, offset + size);
    chunks.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, 'latin1'), chunk, Buffer.from('\r\n', 'latin1'));
  }
  chunks.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(chunks);
}

/** Whether the request names a framing header itself (a hostile form), so none is added. */
function hasOwnFraming(request: FuzzRequest): boolean {
  return request.headers.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name.trim()));
}

/** The head of the request: request line and header lines, up to and including the empty line. */
export function headText(request: FuzzRequest, bindings: Bindings, body: Buffer): string {
  const lines = [
    request.protocol === ''
      ? `${request.method} ${request.target}`
      : `${request.method} ${request.target} ${request.protocol}`,
  ];
  for (const header of request.headers) {
    lines.push(header.length === 1 ? header[0] : `${header[0]}: ${header[1]}`);
  }
  if (!hasOwnFraming(request) && (body.length > 0 || request.method === 'POST' || request.method === 'PUT')) {
    const framing = request.framing;
    if (framing.kind === 'length') {
      lines.push(`content-length: ${body.length}`);
    } else if (framing.kind === 'lying-length') {
      lines.push(`content-length: ${Math.max(0, body.length + framing.delta)}`);
    } else if (framing.kind === 'chunked' || framing.kind === 'malformed-chunk') {
      lines.push('transfer-encoding: chunked');
    } else if (framing.kind === 'both') {
      lines.push(`content-length: ${body.length}`, 'transfer-encoding: chunked');
    }
  }
  return bind(`${lines.join('\r\n')}\r\n\r\n`, bindings);
}

/** The request's bytes on the wire. */
export function wireBytes(request: FuzzRequest, bindings: Bindings): { head: Buffer; bytes: Buffer } {
  const body = bodyBytes(request.body, bindings);
  const head = Buffer.from(headText(request, bindings, body), 'latin1');
  const { framing } = request;
  const framed = hasOwnFraming(request)
    ? body
    : framing.kind === 'chunked' || framing.kind === 'both'
      ? chunked(body, framing.kind === 'chunked' ? framing.size : 64)
      : framing.kind === 'malformed-chunk'
        ? Buffer.from(MALFORMED_CHUNKS[framing.form](body.toString('latin1')), 'latin1')
        : body;
  return { head, bytes: Buffer.concat([head, framed]) };
}

/**
 * The body the server reads: a `content-length` that lies cuts it (the rest is read as the next request), and a
 * body without framing is no body. Undefined when the framing is invalid (a malformed chunk among them), so no body
 * is read at all.
 */
export function bodyAsRead(request: FuzzRequest, bindings: Bindings): Buffer | undefined {
  const body = bodyBytes(request.body, bindings);
  if (hasOwnFraming(request) || request.framing.kind === 'both') {
    return undefined;
  }
  switch (request.framing.kind) {
    case 'length':
    case 'chunked':
      return body;
    case 'lying-length':
      return request.framing.delta < 0 ? body.subarray(0, Math.max(0, body.length + request.framing.delta)) : undefined;
    case 'none':
      return Buffer.alloc(0);
    case 'malformed-chunk':
      return undefined;
  }
}

// ---- Printing a request to replay -------------------------------------------------------------------------------

/** Bodies up to this size are shown as they are; longer ones as their parts, with `.repeat(n)`. */
const SHOWN_BYTES = 800;

const unbound = Object.fromEntries(PLACEHOLDERS.map((name) => [name, name])) as Bindings;

/** A body part as a JavaScript expression, with its repeat as `.repeat(n)`. */
function describePart(part: BodyPart): string {
  const text = JSON.stringify(part.text);
  const shown = part.encoding === 'bytes' ? `bytes(${text})` : text;
  return part.repeat === undefined ? shown : `${shown}.repeat(${part.repeat})`;
}

/** `$'...'` for bash, of text whose characters are bytes (U+0000 to U+00FF): the others are escaped as `\xHH`. */
function ansiQuote(bytes: string): string {
  let out = '';
  for (const char of bytes) {
    const code = char.charCodeAt(0);
    if (char === "'" || char === '\\') {
      out += `\\${char}`;
    } else if (code < 0x20 || code >= 0x7f) {
      out += `\\x${code.toString(16).padStart(2, '0')}`;
    } else {
      out += char;
    }
  }
  return `$'${out}'`;
}

/** Text with placeholders as one bash word, the placeholders read from shell variables of the same name. */
function shellWord(text: string): string {
  const names = text.match(PLACEHOLDER_PATTERN) ?? [];
  const pieces = text.split(PLACEHOLDER_PATTERN);
  let out = '';
  pieces.forEach((piece, index) => {
    if (piece !== '') {
      out += ansiQuote(piece);
    }
    const name = names[index];
    if (name !== undefined) {
      out += `"\${${name.slice(1)}}"`;
    }
  });
  return out === '' ? "''" : out;
}

const CURL_METHOD = /^[A-Z]+$/;
const CURL_SAFE_TARGET = /^\/[\x21-\x7e]*$/;

/** A curl command for the request, when curl can send it as it is (a plain request line, one Host, a usual framing). */
function curlCommand(request: FuzzRequest, body: Buffer): string | undefined {
  const hosts = request.headers.filter(([name]) => name.toLowerCase() === 'host');
  const plain =
    request.protocol === 'HTTP/1.1' &&
    CURL_METHOD.test(request.method) &&
    CURL_SAFE_TARGET.test(request.target) &&
    !request.target.includes('#') &&
    !`${request.target}${request.headers.flat().join('')}${body.toString('latin1')}`.includes('\0') &&
    hosts.length === 1 &&
    hosts[0]?.[1] === '$HOST' &&
    request.headers.every((header) => header.length === 2 && /^[!#-'*+.^_`|~0-9A-Za-z-]+$/.test(header[0])) &&
    !hasOwnFraming(request) &&
    (request.framing.kind === 'length' || request.framing.kind === 'chunked') &&
    body.length <= SHOWN_BYTES;
  if (!plain) {
    return undefined;
  }
  const words = [
    'curl -sS -i --globoff --path-as-is',
    '-X',
    request.method,
    `"http://\${HOST}"${shellWord(request.target)}`,
  ];
  // curl adds these three itself; an empty value removes them.
  words.push("-H 'User-Agent:'", "-H 'Accept:'");
  const sentNames = new Set(request.headers.map(([name]) => name.toLowerCase()));
  if (!sentNames.has('content-type')) {
    words.push("-H 'Content-Type:'");
  }
  for (const header of request.headers) {
    const [name, value = ''] = header;
    if (name.toLowerCase() !== 'host') {
      // `name;` is curl's way to send a header with an empty value.
      words.push('-H', value === '' ? shellWord(`${name};`) : shellWord(`${name}: ${value}`));
    }
  }
  if (request.framing.kind === 'chunked') {
    words.push("-H 'Transfer-Encoding: chunked'");
  }
  if (body.length > 0 || request.method === 'POST' || request.method === 'PUT') {
    words.push('--data-binary', shellWord(body.toString('latin1')));
  }
  return words.join(' ');
}

/** Runs of a repeated unit shortened to `⟪unit × count⟫`, and what is still too long cut, for a readable report. */
export function abbreviate(text: string, max = 2000): string {
  const runs = text.replace(/([\s\S]{1,16}?)\1{7,}/g, (run, unit: string) => `⟪${unit} × ${run.length / unit.length}⟫`);
  return runs.length <= max ? runs : `${runs.slice(0, max)}… (${runs.length - max} more characters)`;
}

/**
 * How to send the request again: the HTTP text (placeholders unbound, long repeats shortened), a curl command when
 * curl can send it, and the command that sends its exact bytes with `test/fuzz/replay.ts`, which reads the request
 * from `file` (written by the caller with `requestJson`). `bindings` only gives the lengths of the placeholders'
 * values, for `content-length`.
 */
export function replayInstructions(request: FuzzRequest, bindings: Bindings, file: string): string {
  const parts = request.body ?? [];
  const sized = bodyBytes(parts, bindings);
  const shown = bodyBytes(parts, unbound);
  const head = headText(request, unbound, sized);
  const bodyText =
    shown.length <= SHOWN_BYTES
      ? shown.toString('latin1')
      : `[${sized.length} bytes: ${parts.map(describePart).join(' + ')}]`;
  const curl = curlCommand(request, shown);
  return [
    "The request (HTTP text, one character per byte; ⟪unit × n⟫ stands for n repeats; placeholders for the fixture's secrets and IDs):",
    `  ${abbreviate(JSON.stringify(`${head}${bodyText}`))}`,
    ...(curl && curl.length <= 2000
      ? ['As curl (set HOST=127.0.0.1:PORT and the placeholders it uses as shell variables):', `  ${curl}`]
      : []),
    'Its exact bytes, against a server you run (set HOST and the placeholders in the environment):',
    `  npx tsx test/fuzz/replay.ts ${file}`,
  ].join('\n');
}

/** The request as JSON, for `test/fuzz/replay.ts`. */
export function requestJson(request: FuzzRequest): string {
  return JSON.stringify(request, null, 1);
}
