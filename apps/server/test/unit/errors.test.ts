import type { ErrorType } from '@apikeys/api-types';
import { specErrors } from '@apikeys/server/testing';
import { loadSpec } from '@apikeys/spec';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { AppError, invalidRequest } from '../../src/domain/errors.js';
import { fromBodyParserError } from '../../src/http/errors/body-parser-errors.js';
import { toHttpError } from '../../src/http/errors/handle-errors.js';
import { HttpError, toErrorResponse } from '../../src/http/errors/http-error.js';

const spec = loadSpec();
const errorType = (spec.components.schemas as Record<string, { enum?: ErrorType[]; 'x-http-status'?: object }>)
  .ErrorType;
/** The error types and their statuses, read from the spec itself so that a new type cannot be forgotten here. */
const SPEC_ERROR_TYPES = errorType?.enum ?? [];
const SPEC_STATUSES = (errorType?.['x-http-status'] ?? {}) as Record<string, number>;

const REQUEST_ID = 'req_4kTz9QmB2xLw7VnR0sYc1HdE';
const fakeRequest = { method: 'GET', path: '/v1/organizations/api_keys' } as Request;

describe('HttpError.of', () => {
  it('knows the error types of the spec', () => {
    expect(SPEC_ERROR_TYPES.length).toBeGreaterThan(0);
    expect(Object.keys(SPEC_STATUSES).sort()).toEqual([...SPEC_ERROR_TYPES].sort());
  });

  it.each(SPEC_ERROR_TYPES)("gives %s the status of the spec's x-http-status", (type) => {
    expect(HttpError.of(type, 'x').status).toBe(SPEC_STATUSES[type]);
  });

  it('gives every error type a distinct 4xx or 5xx status', () => {
    const statuses = SPEC_ERROR_TYPES.map((type) => HttpError.of(type, 'x').status);
    expect(new Set(statuses).size).toBe(statuses.length);
    for (const status of statuses) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });
});

describe('toErrorResponse', () => {
  it.each(SPEC_ERROR_TYPES)('builds a spec-valid ErrorResponse for %s', (type) => {
    const error = HttpError.of(type, `a ${type} happened`);

    const body = toErrorResponse(error, REQUEST_ID);

    expect(body).toEqual({ type: 'error', error: { type, message: `a ${type} happened` }, request_id: REQUEST_ID });
    expect(specErrors(undefined, error.status, body)).toEqual([]);
  });

  it('never copies the cause, the status or the headers into the body', () => {
    const error = new HttpError(405, 'invalid_request_error', 'method DELETE is not allowed', {
      headers: { Allow: 'GET' },
      cause: new Error('internal detail'),
    });

    const body = toErrorResponse(error, REQUEST_ID);

    expect(error.status).toBe(405);
    expect(error.headers).toEqual({ Allow: 'GET' });
    expect(body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'method DELETE is not allowed' },
      request_id: REQUEST_ID,
    });
    expect(specErrors(undefined, 405, body)).toEqual([]);
  });
});

describe('AppError', () => {
  it('carries the API type and message only: its status comes from the HTTP layer', () => {
    const error = invalidRequest('limit', 'must be <= 1000 (query parameter)');

    expect(error).toBeInstanceOf(AppError);
    expect(Object.keys(error)).not.toContain('status');
    expect(Object.keys(error)).not.toContain('headers');
    expect(error.message).toBe('limit: must be <= 1000 (query parameter)');
    expect(HttpError.fromAppError(error)).toMatchObject({ status: 400, type: 'invalid_request_error' });
  });
});

describe('toHttpError', () => {
  it('turns an unknown error into a generic api_error and keeps the details only as the cause', () => {
    const internal = new Error('ECONNREFUSED 10.0.0.5:5432 at /srv/app/node_modules/pg/lib/client.js:132:7');

    const error = toHttpError(internal, fakeRequest);

    expect(error).toMatchObject({ type: 'api_error', status: 500, message: 'internal server error' });
    expect(error.cause).toBe(internal);
    expect(specErrors(undefined, 500, toErrorResponse(error, REQUEST_ID))).toEqual([]);
  });

  it.each([null, undefined, 'a string', 42, { status: 400 }])(
    'turns the non-Error %j into a generic api_error',
    (thrown) => {
      expect(toHttpError(thrown, fakeRequest)).toMatchObject({ type: 'api_error', status: 500 });
    },
  );

  it('gives an AppError the status of its type, keeping its message and cause', () => {
    const cause = new Error('why');
    const error = toHttpError(new AppError('permission_error', 'no', { cause }), fakeRequest);

    expect(error).toMatchObject({ status: 403, type: 'permission_error', message: 'no', headers: {} });
    expect(error.cause).toBe(cause);
  });

  it('passes an HttpError through unchanged', () => {
    const original = new HttpError(415, 'invalid_request_error', 'content-type: no');
    expect(toHttpError(original, fakeRequest)).toBe(original);
  });

  it('hides a response validation failure behind a generic 500', () => {
    const failure = Object.assign(new Error('.response should have required property id'), {
      status: 500,
      path: '/response/id',
      errors: [{ path: '/response/id', message: 'must have required property id' }],
    });

    const error = toHttpError(failure, fakeRequest);

    expect(error).toMatchObject({ type: 'api_error', status: 500, message: 'internal server error' });
  });

  it('copies the Allow header of a 405 from the validator', () => {
    const failure = Object.assign(new Error('method not allowed'), {
      status: 405,
      headers: { Allow: 'GET, POST' },
      errors: [],
    });

    const error = toHttpError(failure, { method: 'DELETE', path: '/v1/organizations/api_keys/x' } as Request);

    expect(error).toMatchObject({ status: 405, type: 'invalid_request_error', headers: { Allow: 'GET, POST' } });
  });
});

describe('fromBodyParserError', () => {
  it("states the body limit of the spec's x-max-request-body-bytes in a 413", () => {
    const limit = spec['x-max-request-body-bytes'] as number;
    expect(limit % (1024 * 1024)).toBe(0);

    const error = fromBodyParserError({ type: 'entity.too.large', status: 413, message: 'too large' });

    expect(error).toMatchObject({
      status: 413,
      type: 'request_too_large',
      message: `request body is larger than ${limit / (1024 * 1024)} MiB`,
    });
  });
});
