import { connect } from 'node:net';
import type { ApiKey, OperationId } from '@apikeys/api-types';
import type { KyselyStore } from '@apikeys/store';
import { expect } from 'vitest';
import { expectMatchesSpec } from '../support/spec-validator.js';

/** The body of an error response, as far as these tests read it. */
export interface ErrorBody {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/** What an HTTP test expects of an error response. */
export interface ExpectedError {
  /** The operation the request targets; undefined for unknown paths and unsupported methods. */
  operationId: OperationId | undefined;
  status: number;
  type: string;
  /** Must match the error message; for invalid requests it should name the parameter, header or field. */
  message: RegExp | string;
}

const INTERNALS = [
  // A stack frame: `at fn (/path/file.ts:12:3)` or `at /path/file.js:1:2`.
  /\bat\s+\S.*:\d+:\d+/,
  /node_modules/,
  // A source file path.
  /(?:\/[\w@.-]+)+\.(?:ts|js|mjs|cjs)\b/,
  /<!DOCTYPE|<html|<pre>/i,
];

/** Asserts that a response body reveals nothing about the server's internals: no stack, no file path, no HTML. */
export function expectNoInternals(text: string): void {
  for (const pattern of INTERNALS) {
    expect(text, `response body leaks internals (${pattern})`).not.toMatch(pattern);
  }
  expect(text).not.toContain(process.cwd());
}

/** Asserts an error response: status, JSON content type, spec-valid ErrorResponse, type, message and no internals. */
export function expectError(
  result: { response: Response; body: unknown; text: string },
  expected: ExpectedError,
): ErrorBody {
  const { response, body, text } = result;
  expect(response.status, text).toBe(expected.status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expectMatchesSpec(expected.operationId, response, body);
  const error = body as ErrorBody;
  expect(error.type).toBe('error');
  expect(error.error.type).toBe(expected.type);
  if (typeof expected.message === 'string') {
    expect(error.error.message).toBe(expected.message);
  } else {
    expect(error.error.message).toMatch(expected.message);
  }
  expectNoInternals(text);
  return error;
}

/** Everything an organization's API keys look like right now, to prove that a rejected request changed nothing. */
export async function snapshotKeys(store: KyselyStore, organizationId: string): Promise<ApiKey[]> {
  const page = await store.listApiKeys({ organizationId, limit: 1000 });
  return page?.data ?? [];
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

/** Writes raw bytes to the server and resolves with everything it answers before closing the connection. */
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

/** A deterministic PRNG, so generated inputs are the same on every run. */
export { seededRandom } from '@apikeys/store';
