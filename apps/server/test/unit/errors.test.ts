import type { ErrorType } from '@apikeys/api-types';
import { loadSpec } from '@apikeys/spec';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { AppError, invalidRequest, statusFor } from '../../src/domain/errors.js';
import { toAppError, toErrorResponse } from '../../src/http/errors.js';
import { specErrors } from '../support/spec-validator.js';

/** The error types the spec declares, read from the spec itself so that a new type cannot be forgotten here. */
const SPEC_ERROR_TYPES = (loadSpec().components.schemas as Record<string, { enum?: ErrorType[] }>).ErrorType?.enum;

/** The HTTP status each error type must map to. */
const EXPECTED_STATUS: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
};

const REQUEST_ID = 'req_4kTz9QmB2xLw7VnR0sYc1HdE';
const fakeRequest = { method: 'GET', path: '/v1/organizations/api_keys' } as Request;

describe('statusFor', () => {
  it('knows exactly the error types of the spec', () => {
    expect(SPEC_ERROR_TYPES?.length).toBeGreaterThan(0);
    expect([...(SPEC_ERROR_TYPES ?? [])].sort()).toEqual(Object.keys(EXPECTED_STATUS).sort());
  });

  it.each(SPEC_ERROR_TYPES ?? [])('maps %s to its status', (type) => {
    expect(statusFor(type)).toBe(EXPECTED_STATUS[type]);
  });

  it('gives every error type a distinct 4xx or 5xx status', () => {
    const statuses = (SPEC_ERROR_TYPES ?? []).map(statusFor);
    expect(new Set(statuses).size).toBe(statuses.length);
    for (const status of statuses) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });
});

describe('toErrorResponse', () => {
  it.each(SPEC_ERROR_TYPES ?? [])('builds a spec-valid ErrorResponse for %s', (type) => {
    const error = new AppError(type, `a ${type} happened`);

    const body = toErrorResponse(error, REQUEST_ID);

    expect(body).toEqual({ type: 'error', error: { type, message: `a ${type} happened` }, request_id: REQUEST_ID });
    expect(specErrors(undefined, error.status, body)).toEqual([]);
  });

  it('never copies the cause, a status override or extra headers into the body', () => {
    const error = new AppError('invalid_request_error', 'method DELETE is not allowed', {
      status: 405,
      headers: { Allow: 'GET' },
      cause: new Error('internal detail'),
    });

    const body = toErrorResponse(error, REQUEST_ID);

    expect(error.status).toBe(405);
    expect(JSON.stringify(body)).not.toContain('internal detail');
    expect(specErrors(undefined, 405, body)).toEqual([]);
  });

  it('names the parameter first in an invalid request', () => {
    const error = invalidRequest('limit', 'must be <= 1000 (query parameter)');

    expect(error.status).toBe(400);
    expect(toErrorResponse(error, REQUEST_ID).error.message).toBe('limit: must be <= 1000 (query parameter)');
  });
});

describe('toAppError', () => {
  it('turns an unknown error into a generic api_error and keeps the details only as the cause', () => {
    const internal = new Error('ECONNREFUSED 10.0.0.5:5432 at /srv/app/node_modules/pg/lib/client.js:132:7');

    const error = toAppError(internal, fakeRequest);

    expect(error).toMatchObject({ type: 'api_error', status: 500, message: 'internal server error' });
    expect(error.cause).toBe(internal);
    expect(specErrors(undefined, 500, toErrorResponse(error, REQUEST_ID))).toEqual([]);
  });

  it.each([null, undefined, 'a string', 42, { status: 400 }])(
    'turns the non-Error %j into a generic api_error',
    (thrown) => {
      expect(toAppError(thrown, fakeRequest)).toMatchObject({ type: 'api_error', status: 500 });
    },
  );

  it('passes an AppError through unchanged', () => {
    const original = new AppError('permission_error', 'no');
    expect(toAppError(original, fakeRequest)).toBe(original);
  });

  it('hides a response validation failure behind a generic 500', () => {
    const failure = Object.assign(new Error('.response should have required property id'), {
      status: 500,
      path: '/response/id',
      errors: [{ path: '/response/id', message: 'must have required property id' }],
    });

    const error = toAppError(failure, fakeRequest);

    expect(error).toMatchObject({ type: 'api_error', status: 500, message: 'internal server error' });
  });
});
