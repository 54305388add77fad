import { loadSpec } from '@apikeys/spec';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_NAME_LENGTH,
  API_KEY_STATUSES,
  API_VERSION,
  API_VERSIONS,
  ERROR_STATUSES,
  LATEST_API_VERSION,
  LIST_LIMIT,
  MAX_REQUEST_BODY_BYTES,
  ROTATION_GRACE_PERIOD_SECONDS,
} from '../src/index.js';

type Schema = Record<string, unknown> & { enum?: unknown[]; properties?: Record<string, Record<string, unknown>> };

const spec = loadSpec();
const parameters = spec.components.parameters as Record<string, { schema: Record<string, unknown> }>;
const schemas = spec.components.schemas as Record<string, Schema>;

describe('the facts generated from the spec', () => {
  it('name the version the document describes and every version the header accepts', () => {
    expect(API_VERSION).toBe((spec.info as { version: string }).version);
    expect(API_VERSIONS.map((version) => loadSpec(version).components.parameters?.VendorVersion)).toEqual(
      API_VERSIONS.map((version) => expect.objectContaining({ schema: expect.objectContaining({ enum: [version] }) })),
    );
    expect(API_VERSIONS[0]).toBe(API_VERSION);
  });

  it('give the bounds and default of limit, and the length of a name', () => {
    const limit = parameters.Limit?.schema;
    expect(LIST_LIMIT).toEqual({ minimum: limit?.minimum, maximum: limit?.maximum, default: limit?.default });
    const name = schemas.UpdateApiKeyRequest?.properties?.name;
    expect(API_KEY_NAME_LENGTH).toEqual({ minimum: name?.minLength, maximum: name?.maxLength });
  });

  it("give the bounds and default of a rotation's grace period, from the latest version", () => {
    const latest = loadSpec(LATEST_API_VERSION).components.schemas as Record<string, Schema>;
    const grace = latest.RotateApiKeyRequest?.properties?.grace_period_seconds;
    expect(ROTATION_GRACE_PERIOD_SECONDS).toEqual({
      minimum: grace?.minimum,
      maximum: grace?.maximum,
      default: grace?.default,
    });
  });

  it('list every API key status and give the body limit', () => {
    expect(API_KEY_STATUSES).toEqual(schemas.ApiKeyStatus?.enum);
    expect(MAX_REQUEST_BODY_BYTES).toBe(spec['x-max-request-body-bytes']);
  });

  it('give every error type its status, and no two types the same one (a client maps statuses back to types)', () => {
    expect(Object.keys(ERROR_STATUSES)).toEqual(schemas.ErrorType?.enum);
    expect(ERROR_STATUSES).toEqual(schemas.ErrorType?.['x-http-status']);
    const statuses = Object.values(ERROR_STATUSES);
    expect(new Set(statuses).size).toBe(statuses.length);
  });
});
