// The client takes its API facts (the default version, the status of each error type) from what is generated from
// the spec. These tests read the spec itself, so that a copy of one of those facts in the client, or generated facts
// that are out of date, fail here.
import { type ErrorType, KEY_USAGE_REPORT } from '@apikeys/api-types';
import { loadSpec, specVersions } from '@apikeys/spec';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  type ApiKeysError,
  AuthenticationError,
  createAdminClient,
  DEFAULT_API_VERSION,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  RequestTooLargeError,
  ServiceUnavailableError,
} from '../src/index.js';
import { toTimestamp } from '../src/verifier/usage-reports.js';
import { type ScriptedServer, startScriptedServer } from './support/scripted-server.js';

const spec = loadSpec();
/** The document of the latest version, the last the spec lists, which the client speaks by default. */
const latest = loadSpec(specVersions().at(-1));
const info = latest.info as { version: string };
const errorTypeSchema = spec.components.schemas?.ErrorType as {
  enum: string[];
  'x-http-status': Record<string, number>;
};
const vendorVersion = latest.components.parameters?.VendorVersion as { schema: { enum: string[] } };
/** The statuses the spec gives error types. */
const mappedStatuses = Object.values(errorTypeSchema['x-http-status']);

/** The class the client documents for each error type; `Record` makes a new type in the spec a compile error. */
const CLASS_OF: Record<ErrorType, new (...args: never[]) => ApiKeysError> = {
  invalid_request_error: InvalidRequestError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  not_found_error: NotFoundError,
  request_too_large: RequestTooLargeError,
  rate_limit_error: RateLimitError,
  api_error: ApiError,
  service_unavailable_error: ServiceUnavailableError,
};

/** A body that does not follow the contract, as a proxy in front of the API might send it. */
const HTML_PAGE = '<!DOCTYPE html><html><body><h1>Something went wrong</h1></body></html>';

let scripted: ScriptedServer | undefined;

afterEach(async () => {
  await scripted?.close();
  scripted = undefined;
});

/** The error the real client throws for one response of `status` with an HTML body, without retrying. */
async function errorForStatus(status: number): Promise<unknown> {
  scripted = await startScriptedServer([{ status, body: HTML_PAGE }]);
  const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test', maxRetries: 0 });
  const error = await client.apiKeys.list().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(scripted.requests).toHaveLength(1);
  return error;
}

describe('the API version', () => {
  it("sends by default the version of the spec's info.version", () => {
    expect(DEFAULT_API_VERSION).toBe(info.version);
  });

  it('sends by default a version the vendor-version header of the spec accepts', () => {
    expect(vendorVersion.schema.enum).toContain(DEFAULT_API_VERSION);
  });
});

describe('error types of the spec', () => {
  it('gives every error type a status of its own (x-http-status), which the client relies on', () => {
    expect(Object.keys(errorTypeSchema['x-http-status']).sort()).toEqual([...errorTypeSchema.enum].sort());
    expect(new Set(mappedStatuses).size).toBe(mappedStatuses.length);
  });

  it('has a client error class for every error type', () => {
    expect(Object.keys(CLASS_OF).sort()).toEqual([...errorTypeSchema.enum].sort());
  });

  it.each(errorTypeSchema.enum)(
    'makes a non-contract response with the status of %s an error of its class',
    async (type) => {
      const status = errorTypeSchema['x-http-status'][type];
      const ErrorClass = CLASS_OF[type as ErrorType];
      expect(status, `x-http-status of ${type}`).toBeTypeOf('number');
      expect(ErrorClass, `client class of ${type}`).toBeDefined();

      const error = await errorForStatus(status as number);

      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toMatchObject({ name: ErrorClass.name, type, status, body: HTML_PAGE });
      expect((error as Error).message).toMatch(new RegExp(`^HTTP ${status}\\b`));
    },
  );
});

describe('statuses the spec gives no error type', () => {
  it.each([501, 502, 504, 507])('makes %i an ApiError', async (status) => {
    expect(mappedStatuses).not.toContain(status);

    const error = await errorForStatus(status);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'ApiError', type: 'api_error', status });
  });

  it.each([402, 405, 409, 418, 422])('makes %i an InvalidRequestError', async (status) => {
    expect(mappedStatuses).not.toContain(status);

    const error = await errorForStatus(status);

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ name: 'InvalidRequestError', type: 'invalid_request_error', status });
  });
});

describe('the caching verifier', () => {
  const schemas = latest.components.schemas ?? {};

  it('sends at most as many uses per report as KeyUsageReport allows', () => {
    const report = schemas.KeyUsageReport as { properties: { uses: { maxItems: number } } };

    expect(KEY_USAGE_REPORT.maxUses).toBe(report.properties.uses.maxItems);
  });

  it("writes used_at as the spec's Timestamp pattern says", () => {
    const timestamp = schemas.Timestamp as { pattern: string };

    expect(toTimestamp(Date.now())).toMatch(new RegExp(timestamp.pattern));
  });
});
