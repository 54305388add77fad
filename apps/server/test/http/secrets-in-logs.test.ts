import {
  API_VERSION,
  authHeaders,
  DEFAULT_ORGANIZATION,
  sendRaw,
  startTestServer,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ORG = DEFAULT_ORGANIZATION.id;
const LIST = '/v1/organizations/api_keys';

/** One line of the request log, as far as these tests read it. */
interface RequestLogLine {
  msg: string;
  request_id?: unknown;
  method?: unknown;
  route?: unknown;
  status?: unknown;
  duration_ms?: unknown;
}

interface SentRequest {
  requestId: string;
  method: string;
  status: number;
}

/** The random part of a secret: a logger that strips the prefix must not get past the check either. */
const randomPartOf = (secret: string) => secret.replace(/^sk-(adm|api)-/, '');

describe('secrets never reach the log', () => {
  let server: TestServer;
  let otherAdmin: string;
  let disabledAdmin: string;
  const apiKeySecrets: string[] = [];
  const apiKeyIds: string[] = [];
  const wrongSecrets = [
    `sk-adm-${'Z'.repeat(43)}`,
    `sk-api-${'Y'.repeat(43)}`,
    'correct-horse-battery-staple-0123456789',
  ];

  beforeAll(async () => {
    server = await startTestServer();
    const other = await server.store.createOrganization('other');
    otherAdmin = (await server.store.createAdminKey({ organizationId: other.id, name: 'other admin' })).secret;
    const disabled = await server.store.createAdminKey({ organizationId: ORG, name: 'disabled admin' });
    await server.store.setAdminKeyStatus(disabled.adminKey.id, 'disabled');
    disabledAdmin = disabled.secret;
    for (const [organizationId, name] of [
      [ORG, 'own 1'],
      [ORG, 'own 2'],
      [other.id, 'other 1'],
    ] as const) {
      const created = await server.store.createApiKey({
        organizationId,
        name,
        workspaceId: 'wrkspc_logs',
        createdBy: { id: 'user_logs', type: 'user' },
      });
      apiKeySecrets.push(created.secret);
      apiKeyIds.push(created.apiKey.id);
    }
  });
  afterAll(() => server.close());

  it('logs one line per request with request_id, method, route, status and duration_ms, and never a secret', async () => {
    const adminSecrets = [server.adminKey, otherAdmin, disabledAdmin];
    const tampered = `${server.adminKey.slice(0, -2)}xx`;
    const [ownKey = '', , foreignKey = ''] = apiKeyIds;
    const [ownSecret = '', , foreignSecret = ''] = apiKeySecrets;
    const json = { 'content-type': 'application/json' };
    const sent: SentRequest[] = [];
    const send = async (path: string, init: RequestInit = {}) => {
      const { response } = await server.request(path, init);
      sent.push({
        requestId: response.headers.get('request-id') ?? '',
        method: init.method ?? 'GET',
        status: response.status,
      });
      return response.status;
    };

    // Successful requests with every admin key that works.
    for (const admin of [server.adminKey, otherAdmin]) {
      expect(await send(`${LIST}?limit=5`, { headers: authHeaders(admin) })).toBe(200);
    }
    expect(await send(`${LIST}/${ownKey}`, { headers: authHeaders(server.adminKey) })).toBe(200);
    expect(
      await send(`${LIST}/${ownKey}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, json),
        body: '{"status":"inactive"}',
      }),
    ).toBe(200);
    expect(
      await send(`${LIST}?workspace_id=wrkspc_logs&created_by_user_id=user_logs`, {
        headers: { 'x-api-key': server.adminKey, 'anthropic-version': API_VERSION },
      }),
    ).toBe(200);
    // Regular API key secrets, wrong secrets, a tampered and a disabled admin key.
    for (const secret of [...apiKeySecrets, ...wrongSecrets, tampered, disabledAdmin]) {
      expect([401, 403]).toContain(await send(LIST, { headers: authHeaders(secret) }));
      expect([401, 403]).toContain(
        await send(`${LIST}/${ownKey}`, {
          method: 'POST',
          headers: authHeaders(secret, json),
          body: '{"name":"nope"}',
        }),
      );
    }
    // Secrets pasted where they do not belong: path, query, body, other headers.
    expect(await send(`${LIST}/${ownSecret}`, { headers: authHeaders(server.adminKey) })).toBe(404);
    expect(await send(`${LIST}?after_id=${foreignSecret}`, { headers: authHeaders(server.adminKey) })).toBe(400);
    expect(await send(`${LIST}?${encodeURIComponent(ownSecret)}=1`, { headers: authHeaders(server.adminKey) })).toBe(
      400,
    );
    expect(
      await send(`${LIST}/${foreignKey}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, json),
        body: JSON.stringify({ name: otherAdmin }),
      }),
    ).toBe(404);
    expect(
      await send(`${LIST}/${ownKey}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, json),
        body: JSON.stringify({ [ownSecret]: 'x' }),
      }),
    ).toBe(400);
    expect(
      await send(`${LIST}/${ownKey}`, {
        method: 'POST',
        headers: authHeaders(server.adminKey, json),
        body: `{"name": "${disabledAdmin}`,
      }),
    ).toBe(400);
    expect(await send(LIST, { headers: { 'x-api-key': server.adminKey, 'vendor-version': `${otherAdmin}` } })).toBe(
      400,
    );
    expect(await send(LIST, { headers: authHeaders(server.adminKey, { authorization: `Bearer ${otherAdmin}` }) })).toBe(
      200,
    );
    expect(await send('/v1/unknown', { headers: authHeaders(server.adminKey) })).toBe(404);
    expect(await send(`${LIST}/${ownKey}`, { method: 'DELETE', headers: authHeaders(server.adminKey) })).toBe(405);
    // The key in a request the HTTP parser rejects.
    await sendRaw(server.baseUrl, `GET ${LIST} HTTP/1.1\r\nx-api-key: ${server.adminKey}\r\nbroken header\r\n\r\n`);

    const requestLines = () =>
      server.logLines.map((line) => JSON.parse(line) as RequestLogLine).filter((line) => line.msg === 'request');
    // The log line is written when the response closes, which may be just after the client has read it.
    await vi.waitFor(() => expect(requestLines()).toHaveLength(sent.length));

    const lines = requestLines();
    for (const request of sent) {
      const matching = lines.filter((line) => line.request_id === request.requestId);
      expect(matching, `log lines of ${request.requestId}`).toHaveLength(1);
      const [line] = matching;
      expect(line).toMatchObject({ method: request.method, status: request.status });
      expect(line?.route === null || typeof line?.route === 'string').toBe(true);
      expect(typeof line?.duration_ms).toBe('number');
      expect(line?.duration_ms as number).toBeGreaterThanOrEqual(0);
      if (request.status === 200) {
        expect(line?.route).toMatch(/^\/v1\/organizations\/api_keys/);
      }
    }

    const everySecret = [...adminSecrets, ...apiKeySecrets, ...wrongSecrets, tampered];
    const log = server.logLines.join('\n');
    expect(log.length).toBeGreaterThan(0);
    for (const secret of everySecret) {
      expect(log.includes(secret), `the log holds the secret ${secret.slice(0, 11)}…`).toBe(false);
      expect(log.includes(randomPartOf(secret)), `the log holds the random part of ${secret.slice(0, 11)}…`).toBe(
        false,
      );
    }
  });
});
