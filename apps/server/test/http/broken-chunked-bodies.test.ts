import { type AnyOperationId, API_VERSION, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  type ErrorBody,
  expectMatchesSpec,
  expectNoInternals,
  openRawConnection,
  type RawConnection,
  type RawResponse,
  rawRequest,
  snapshotKeys,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Well under the server's timeouts (10 s for headers, 30 s for a request), which a request left hanging would reach.
const PROMPTLY_MS = 5_000;

/** An operation sent with a chunked body, and the JSON body it would accept. */
interface ChunkedOperation {
  operationId: AnyOperationId;
  method: 'GET' | 'POST';
  version: ApiVersion;
  /** The path of a request, made afresh for each case (a key to update, say). */
  path(): Promise<string>;
  body: string;
}

/** A body framed in a way Node's HTTP parser refuses once it has read the headers, around the JSON `json`. */
interface BrokenFraming {
  name: string;
  frame(json: string): string;
}

const hex = (json: string) => Buffer.byteLength(json).toString(16);

const BROKEN_FRAMINGS: BrokenFraming[] = [
  { name: 'a chunk size that is not hexadecimal', frame: (json) => `zz\r\n${json}\r\n0\r\n\r\n` },
  { name: 'a chunk without its CRLF terminator', frame: (json) => `${hex(json)}\r\n${json}XX0\r\n\r\n` },
  { name: 'a chunk size of 20 hex digits', frame: (json) => `${'f'.repeat(20)}\r\n${json}\r\n0\r\n\r\n` },
  {
    name: 'a chunk-size line of 20 KiB (its extension)',
    frame: (json) => `${hex(json)};${'x'.repeat(20 * 1024)}\r\n${json}\r\n0\r\n\r\n`,
  },
  { name: 'a chunk-size line holding a NUL byte', frame: (json) => `${hex(json)}\u0000\r\n${json}\r\n0\r\n\r\n` },
  { name: 'a chunk-size line ending in a bare LF', frame: (json) => `${hex(json)}\n${json}\r\n0\r\n\r\n` },
  {
    name: 'a last chunk without the final CRLF, followed by junk',
    frame: (json) => `${hex(json)}\r\n${json}\r\n0\r\njunk junk\r\n\r\n`,
  },
];

describe('a request whose chunked body the HTTP parser refuses', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let stranger: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('broken chunked bodies');
    stranger = await server.createOrganization('someone else');
  });
  afterAll(() => server?.close());

  const keyToChange = async () =>
    (
      await server.store.createApiKey({
        organizationId: org.id,
        name: 'unchanged',
        createdBy: { id: 'user_framing', type: 'user' },
      })
    ).apiKey.id;

  const OPERATIONS: ChunkedOperation[] = [
    {
      operationId: 'updateApiKey',
      method: 'POST',
      version: API_VERSION,
      path: async () => apiKeyPath(await keyToChange()),
      body: JSON.stringify({ name: 'renamed', status: 'archived' }),
    },
    {
      operationId: 'createApiKey',
      method: 'POST',
      version: LATEST_API_VERSION,
      path: async () => API_KEYS_PATH,
      body: JSON.stringify({ name: 'created' }),
    },
    {
      operationId: 'rotateApiKey',
      method: 'POST',
      version: LATEST_API_VERSION,
      path: async () => `${apiKeyPath(await keyToChange())}/rotate`,
      body: JSON.stringify({ grace_period_seconds: 60 }),
    },
    {
      operationId: 'verifyApiKey',
      method: 'POST',
      version: LATEST_API_VERSION,
      path: async () => '/v1/keys/verify',
      body: JSON.stringify({ key: `sk-api-${'A'.repeat(49)}` }),
    },
    {
      operationId: 'listApiKeys',
      method: 'GET',
      version: API_VERSION,
      path: async () => API_KEYS_PATH,
      body: JSON.stringify({}),
    },
  ];

  const operation = (operationId: AnyOperationId) =>
    OPERATIONS.find((candidate) => candidate.operationId === operationId) as ChunkedOperation;

  /** The head of a chunked request of `operation`, with the organization's admin key. */
  const chunkedHead = (operation: ChunkedOperation, path: string) =>
    rawRequest(operation.method, path, {
      'x-api-key': org.adminKey,
      'vendor-version': operation.version,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });

  /** Asserts the 400 of a broken body: the operation's documented error, promptly, in the spec's error shape. */
  function expectFramingError(operation: ChunkedOperation, response: RawResponse): ErrorBody {
    expect(response.status, response.body).toBe(400);
    const body = JSON.parse(response.body) as ErrorBody;
    expectMatchesSpec(operation.operationId, response, body, operation.version);
    expect(body.error).toEqual({
      type: 'invalid_request_error',
      message: 'malformed request body: its chunked framing (transfer-encoding) is invalid',
    });
    expect(response.headers.get('connection')).toBe('close');
    expectNoInternals(response.body);
    return body;
  }

  /** Runs `act` and asserts that the organization's keys are exactly as before, and nothing was logged as failing. */
  async function expectNothingChanged(act: () => Promise<void>): Promise<void> {
    const before = await snapshotKeys(server.store, org.id);
    const loggedBefore = server.logLines.length;
    await act();
    expect(await snapshotKeys(server.store, org.id)).toEqual(before);
    const failures = server.logLines
      .slice(loggedBefore)
      .filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(failures).toEqual([]);
  }

  async function withConnection(use: (connection: RawConnection) => Promise<void>): Promise<void> {
    const connection = await openRawConnection(server.baseUrl);
    try {
      await use(connection);
    } finally {
      connection.destroy();
    }
  }

  describe.each(OPERATIONS)('$method $operationId', (sent) => {
    it.each(BROKEN_FRAMINGS)(
      'answers $name with 400 at once, closes the connection, changes nothing',
      async (framing) => {
        const path = await sent.path();
        await expectNothingChanged(() =>
          withConnection(async (connection) => {
            await connection.write(chunkedHead(sent, path) + framing.frame(sent.body));

            const body = expectFramingError(sent, await connection.nextResponse(PROMPTLY_MS));
            expect(await connection.ended).toEqual({ kind: 'fin' });
            expect(
              server.logLines.some((line) => line.includes(body.request_id) && line.includes('client error')),
            ).toBe(true);
          }),
        );
      },
    );
  });

  it('answers a body that breaks after the server has begun to read it, and applies no update', async () => {
    const update = operation('updateApiKey');
    const path = await update.path();
    await expectNothingChanged(() =>
      withConnection(async (connection) => {
        await connection.write(`${chunkedHead(update, path)}${hex(update.body)}\r\n${update.body}\r\n`);
        // Long enough for authentication to pass and the body parser to wait for the last chunk.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await connection.write('0\r\njunk junk\r\n\r\n');

        expectFramingError(update, await connection.nextResponse(PROMPTLY_MS));
        expect(await connection.ended).toEqual({ kind: 'fin' });
      }),
    );
  });

  it('answers the requests pipelined before the broken one first, each in turn', async () => {
    const update = operation('updateApiKey');
    const path = await update.path();
    const listRequest = rawRequest('GET', API_KEYS_PATH, { 'x-api-key': org.adminKey, 'vendor-version': API_VERSION });
    await expectNothingChanged(() =>
      withConnection(async (connection) => {
        await connection.write(listRequest + chunkedHead(update, path) + BROKEN_FRAMINGS[0]?.frame(update.body));

        const listed = await connection.nextResponse(PROMPTLY_MS);
        expect(listed.status, listed.body).toBe(200);
        expectMatchesSpec('listApiKeys', listed, JSON.parse(listed.body), API_VERSION);
        const refused = expectFramingError(update, await connection.nextResponse(PROMPTLY_MS));
        expect(refused.request_id).not.toBe(listed.headers.get('request-id'));
        expect(await connection.ended).toEqual({ kind: 'fin' });
      }),
    );
  });

  // A chunked body of no bytes is no body, as `content-length: 0` is: the operation answers alike (a rotation, whose
  // body is optional, with its 200 or 404 rather than the 415 of a body that is not JSON).
  describe.each(OPERATIONS.filter((sent) => sent.method === 'POST'))(
    '$operationId with an empty body and no content-type',
    (sent) => {
      const bodiless = async (adminKey: string, framing: 'chunked' | 'length') => {
        const head = rawRequest(sent.method, await sent.path(), {
          'x-api-key': adminKey,
          'vendor-version': sent.version,
          ...(framing === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': '0' }),
        });
        let response: RawResponse | undefined;
        await withConnection(async (connection) => {
          await connection.write(head + (framing === 'chunked' ? '0\r\n\r\n' : ''));
          response = await connection.nextResponse(PROMPTLY_MS);
        });
        const answered = response as RawResponse;
        const body = JSON.parse(answered.body) as Partial<ErrorBody>;
        expectMatchesSpec(sent.operationId, answered, body, sent.version);
        // Each request has a key of its own (a rotation expires its key): its ID may differ between the two.
        const message = body.error?.message.replace(/apikey_\w+/g, 'apikey_...');
        return { status: answered.status, type: body.error?.type, message };
      };

      it.each([
        ['its own admin key', () => org.adminKey],
        ["another organization's admin key", () => stranger.adminKey],
      ])('answers a zero-length chunked body as content-length 0, with %s', async (_, adminKey) => {
        const chunked = await bodiless(adminKey(), 'chunked');

        expect(chunked).toEqual(await bodiless(adminKey(), 'length'));
      });
    },
  );

  it('still applies the same update when its chunked body is well framed', async () => {
    const update = operation('updateApiKey');
    const path = await update.path();
    await withConnection(async (connection) => {
      await connection.write(`${chunkedHead(update, path)}${hex(update.body)}\r\n${update.body}\r\n0\r\n\r\n`);

      const response = await connection.nextResponse(PROMPTLY_MS);
      expect(response.status, response.body).toBe(200);
      expect(JSON.parse(response.body)).toMatchObject({ name: 'renamed', status: 'archived' });
    });
  });
});
