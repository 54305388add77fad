import { type AnyOperationId, API_VERSION, type ApiVersion } from '@apikeys/api-types';
import { expect } from 'vitest';
import { documentedStatuses, specErrors } from './spec-responses.js';

/** An operation of any API version. */
type OperationId = AnyOperationId;

/** The body of an error response, as far as tests read it. */
export interface ErrorBody {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/**
 * Asserts that a response is what the spec promises: a documented status (for an operation), a JSON content type,
 * a `request-id` header, and a body that validates against the declared schema. Pass no operationId for
 * responses outside any operation (unknown paths, unsupported methods), which must still be ErrorResponses.
 */
export function expectMatchesSpec(
  operationId: OperationId | undefined,
  response: { status: number; headers: Headers },
  body: unknown,
  version: ApiVersion = API_VERSION,
): void {
  if (operationId !== undefined) {
    const documented = documentedStatuses(operationId, version);
    expect(documented, `${operationId} documents ${response.status}`).toContain(response.status);
  }
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9]{24}$/);
  expect(specErrors(operationId, response.status, body, version)).toEqual([]);
  // Every error body repeats the request ID (the spec checked above that an error status has the error shape; the
  // readiness probe's 503 is a report, not an error).
  if (response.status >= 400 && (body as { type?: unknown }).type === 'error') {
    expect((body as { request_id?: string }).request_id).toBe(response.headers.get('request-id'));
  }
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

/** What a test expects of an error response. */
export interface ExpectedError {
  /** The operation the request targets; undefined for unknown paths and unsupported methods. */
  operationId: OperationId | undefined;
  status: number;
  type: string;
  /** The message, or a pattern it must match; for invalid requests it names the parameter, header or field. */
  message: RegExp | string;
  /** The API version whose document the response must match; the first version when not given. */
  version?: ApiVersion;
}

/**
 * Asserts an error response: its status, a spec-valid ErrorResponse (JSON, `request-id`, documented status), its
 * type and message, and no internals in the body. `text` defaults to the body as JSON (for a typed client's result).
 */
export function expectError(
  result: { response: Response; body: unknown; text?: string },
  expected: ExpectedError,
): ErrorBody {
  const { response, body } = result;
  const text = result.text ?? JSON.stringify(body);
  expect(response.status, text).toBe(expected.status);
  expectMatchesSpec(expected.operationId, response, body, expected.version);
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

/**
 * Asserts the 500 contract: the generic `api_error` body that reveals nothing of `secretDetail`, and one log line
 * at error level, with the request ID of the response, that carries the details.
 */
export function expectInternalError(
  logLines: readonly string[],
  result: { response: Response; body: unknown },
  secretDetail: string,
): void {
  const { response, body } = result;
  const requestId = response.headers.get('request-id');
  expect(response.status).toBe(500);
  expect(body).toEqual({
    type: 'error',
    error: { type: 'api_error', message: 'internal server error' },
    request_id: requestId,
  });
  expect(JSON.stringify(body)).not.toContain(secretDetail);
  const logged = logLines
    .map((line) => JSON.parse(line) as { level?: number; request_id?: string; err?: { message?: string } })
    .filter((entry) => entry.request_id === requestId && entry.level === 50);
  expect(logged).toHaveLength(1);
  expect(logged[0]?.err?.message).toBe(secretDetail);
}

/** The message of a 503: for a read, or for a change by what became of it (spec: ServiceUnavailable). */
export const UNAVAILABLE_MESSAGES = {
  read: 'the database is unavailable; retry later',
  not_made: 'the database is unavailable; the change was not made: retry later',
  unknown: 'the database is unavailable; the outcome is unknown: read the key before retrying',
} as const;

/**
 * Asserts the 503 contract: `service_unavailable_error` with the message of a read, or, given `writeOutcome`, of a
 * change that was not made or may have been, a `retry-after` of whole seconds, and one warning in the log, with the
 * request ID of the response, that says why (and hides nothing from the log) and, for a change, its `write_outcome`.
 */
export function expectUnavailable(
  logLines: readonly string[],
  result: { response: Response; body: unknown },
  operationId: OperationId,
  version: ApiVersion = API_VERSION,
  writeOutcome?: 'not_made' | 'unknown',
): void {
  const { response, body } = result;
  const requestId = response.headers.get('request-id');
  expect(response.status).toBe(503);
  expectMatchesSpec(operationId, response, body, version);
  expect(body).toEqual({
    type: 'error',
    error: { type: 'service_unavailable_error', message: UNAVAILABLE_MESSAGES[writeOutcome ?? 'read'] },
    request_id: requestId,
  });
  expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  const logged = logLines
    .map(
      (line) =>
        JSON.parse(line) as {
          level?: number;
          request_id?: string;
          msg?: string;
          reason?: string;
          write_outcome?: string;
        },
    )
    .filter((entry) => entry.request_id === requestId && entry.msg === 'database unavailable');
  expect(logged).toHaveLength(1);
  expect(logged[0]?.level).toBe(40);
  expect(logged[0]?.reason).toEqual(expect.any(String));
  expect(logged[0]?.write_outcome).toBe(writeOutcome);
}
