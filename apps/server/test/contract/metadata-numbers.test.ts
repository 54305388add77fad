import { type AnyOperationId, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  expectError,
  expectMatchesSpec,
  snapshotKeys,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A metadata number must come back as it was sent (KeyMetadata): one that JSON would not give back, which
// JSON.stringify cannot even write, is sent here as raw JSON text.

type Key = Record<string, unknown> & { id: string };

/** The message of a refused number, after the name of the member. */
const NUMBER_RULE =
  /: a number must be finite and within ±9007199254740991 \(2\^53 − 1\); send larger ones as strings$/;

/** Metadata that JSON would not give back as sent, as raw JSON text, and the member the refusal names. */
const REFUSED: [string, string, string][] = [
  ['1e400, which JSON.parse reads as Infinity (written back as null)', '{"n": 1e400}', 'metadata.n'],
  ['-1e400', '{"limits": {"min": -1e400}}', 'metadata.limits.min'],
  ['2^53 + 1, which JSON.parse reads as 2^53', '{"customer_id": 9007199254740993}', 'metadata.customer_id'],
  ['a number past 2^53 − 1 in a list', '{"ids": [1, 12345678901234567890]}', 'metadata.ids[1]'],
];

describe('metadata numbers', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('metadata numbers');
  });
  afterAll(() => server.close());

  async function send(operationId: AnyOperationId, path: string, json: string) {
    const result = await server.request(path, {
      method: 'POST',
      headers: authHeaders(org.adminKey, { 'vendor-version': LATEST_API_VERSION, 'content-type': 'application/json' }),
      body: json,
    });
    expectMatchesSpec(operationId, result.response, result.body, LATEST_API_VERSION);
    return result;
  }
  const invalid = (operationId: AnyOperationId, member: string) =>
    ({
      operationId,
      status: 400,
      type: 'invalid_request_error',
      message: new RegExp(`^${member.replace(/[.[\]]/g, '\\$&')}${NUMBER_RULE.source}`),
      version: LATEST_API_VERSION,
    }) as const;

  it.each(REFUSED)('createApiKey refuses %s with a 400 naming it, and creates nothing', async (_, metadata, member) => {
    const before = await snapshotKeys(server.store, org.id);

    const result = await send('createApiKey', API_KEYS_PATH, `{"name": "refused", "metadata": ${metadata}}`);

    expectError(result, invalid('createApiKey', member));
    expect(await snapshotKeys(server.store, org.id)).toEqual(before);
  });

  it.each(REFUSED)('updateApiKey refuses %s with a 400 naming it, and changes nothing', async (_, metadata, member) => {
    const key = (await send('createApiKey', API_KEYS_PATH, '{"name": "kept", "metadata": {"n": 1}}')).body as Key;
    const before = await snapshotKeys(server.store, org.id);

    const result = await send('updateApiKey', apiKeyPath(key.id), `{"name": "changed", "metadata": ${metadata}}`);

    expectError(result, invalid('updateApiKey', member));
    expect(await snapshotKeys(server.store, org.id)).toEqual(before);
  });

  it('keeps every number within the bounds as sent, and -0 as 0, the same number', async () => {
    const metadata = '{"max": 9007199254740991, "min": -9007199254740991, "tiny": 5e-324, "ratio": 0.1, "zero": -0}';

    const created = (await send('createApiKey', API_KEYS_PATH, `{"name": "bounds", "metadata": ${metadata}}`))
      .body as Key;
    const updated = (await send('updateApiKey', apiKeyPath(created.id), `{"metadata": ${metadata}}`)).body as Key;

    const expected = { max: 9007199254740991, min: -9007199254740991, tiny: 5e-324, ratio: 0.1, zero: 0 };
    expect(created.metadata).toEqual(expected);
    expect(updated.metadata).toEqual(expected);
    expect(JSON.stringify((await server.store.getApiKey(org.id, created.id))?.metadata)).toBe(JSON.stringify(expected));
  });
});
