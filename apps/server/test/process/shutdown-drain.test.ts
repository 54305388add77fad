import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  type ConnectionEnd,
  createKey,
  createTestDatabase,
  DEFAULT_ORGANIZATION,
  openRawConnection,
  type PreparedDatabase,
  postgresAvailable,
  prepareDatabase,
  type RawConnection,
  type RawResponse,
  rawRequest,
  type ServerProcess,
  startServerProcess,
  startTestServer,
  type TestDatabase,
} from '@apikeys/server/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const CONNECTIONS = 20;
/** The page size of the list requests: every page is full, so a response of several kilobytes. */
const PAGE = 20;

const listRequest = (adminKey: string) => rawRequest('GET', `${API_KEYS_PATH}?limit=${PAGE}`, authHeaders(adminKey));

/** Opens a connection and sends one request on it, so that it is established and idle (kept alive) afterwards. */
async function idleKeepAliveConnection(baseUrl: string, adminKey: string): Promise<RawConnection> {
  const connection = await openRawConnection(baseUrl);
  await connection.write(listRequest(adminKey));
  const first = await connection.nextResponse();
  expect(first.status).toBe(200);
  expect(first.headers.get('connection')).toBe('keep-alive');
  return connection;
}

const isFullPage = (response: RawResponse) =>
  response.status === 200 && (JSON.parse(response.body) as { data: unknown[] }).data.length === PAGE;

/** What the connections got: complete responses, failures to get one, and how each connection ended. */
async function outcomes(connections: readonly RawConnection[]) {
  const results = await Promise.allSettled(connections.map((connection) => connection.nextResponse()));
  const ends: ConnectionEnd[] = await Promise.all(connections.map((connection) => connection.ended));
  const answered = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
  const resets = ends.filter((end) => end.kind === 'error').length;
  return { answered, failures, ends, summary: `${answered.length} of ${connections.length} answered, ${resets} reset` };
}

/** Asserts that every connection got a complete full page with `Connection: close`, then a clean close (FIN). */
function expectAllAnsweredThenClosed({ answered, failures, ends, summary }: Awaited<ReturnType<typeof outcomes>>) {
  expect(failures, summary).toEqual([]);
  expect(ends, summary).toEqual(Array(CONNECTIONS).fill({ kind: 'fin' }));
  expect(answered.every(isFullPage), summary).toBe(true);
  expect(answered.map((response) => response.headers.get('connection'))).toEqual(Array(CONNECTIONS).fill('close'));
}

/**
 * In a server process, libuv runs a signal's handler after the socket reads of the same poll, so requests that
 * reached the kernel before SIGTERM have been read when the shutdown begins; requests that arrive while it begins
 * have not. In process, the test begins the drain in the same tick as it writes, before the event loop has read a
 * byte: every request then sits unread in the kernel when the drain begins, every time.
 */
describe('the drain, begun while requests sit unread in the kernel', () => {
  async function serverWithFullPages() {
    const server = await startTestServer();
    for (let i = 0; i < PAGE; i++) {
      await createKey(server.store, DEFAULT_ORGANIZATION.id, { name: `key ${i}` });
    }
    return server;
  }

  it(`answers ${CONNECTIONS} requests on idle keep-alive connections with Connection: close, then FIN`, async () => {
    const server = await serverWithFullPages();
    const connections = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => idleKeepAliveConnection(server.baseUrl, server.adminKey)),
    );

    for (const connection of connections) {
      void connection.write(listRequest(server.adminKey));
    }
    const closed = server.close();
    const result = await outcomes(connections);
    await closed;

    expectAllAnsweredThenClosed(result);
  });

  it('answers every pipelined request, and only the last response closes the connection', async () => {
    const server = await serverWithFullPages();
    const connection = await idleKeepAliveConnection(server.baseUrl, server.adminKey);

    void connection.write(listRequest(server.adminKey).repeat(3));
    const closed = server.close();
    const responses: RawResponse[] = [];
    for (let i = 0; i < 3; i++) {
      responses.push(await connection.nextResponse());
    }
    const end = await connection.ended;
    await closed;

    expect(responses.map((response) => [isFullPage(response), response.headers.get('connection')])).toEqual([
      [true, 'keep-alive'],
      [true, 'keep-alive'],
      [true, 'close'],
    ]);
    expect(end).toEqual({ kind: 'fin' });
  });
});

describe.runIf(await postgresAvailable())('a server process shutting down on SIGTERM', () => {
  let database: TestDatabase | undefined;
  let prepared: PreparedDatabase;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    prepared = await prepareDatabase(database.url, { apiKeys: PAGE });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.kill()));
  });
  afterAll(async () => {
    await database?.drop();
  });

  async function start(env: Record<string, string> = {}) {
    const server = await startServerProcess({ env: { DATABASE_URL: prepared.url, ...env } });
    running.push(server);
    return server;
  }

  it(`answers ${CONNECTIONS} list requests written to idle keep-alive connections just before SIGTERM`, async () => {
    const server = await start();
    const connections = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => idleKeepAliveConnection(server.baseUrl, prepared.adminKey)),
    );

    // Frozen, the server cannot read the requests before SIGTERM arrives: they sit unread in the kernel. On thawing,
    // it reads them and runs its SIGTERM handler, in either order: the signal may reach a thread of its own after
    // the main thread has read the sockets. The lock keeps the pages waiting for the database until the server has
    // begun to shut down, so every request is in flight when the drain starts: each response says
    // `Connection: close`. (Without the lock, on a busy machine, the pages could be answered before the handler
    // runs, and the connections kept alive until the drain closes them.)
    const lock = new pg.Client({ connectionString: prepared.url });
    await lock.connect();
    try {
      await lock.query('begin');
      await lock.query('lock table api_keys in access exclusive mode');
      server.child.kill('SIGSTOP');
      await Promise.all(connections.map((connection) => connection.write(listRequest(prepared.adminKey))));
      server.child.kill('SIGTERM');
      server.child.kill('SIGCONT');
      await server.waitForLine((line) => line.msg === 'shutting down');
      await lock.query('commit');
    } finally {
      await lock.end();
    }
    const result = await outcomes(connections);
    const exit = await server.exited;

    expectAllAnsweredThenClosed(result);
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
  });

  it('closes idle keep-alive connections, and one that never sent a request, cleanly (FIN) and promptly', async () => {
    // A grace far above Node's keep-alive timeout (5 s, plus 1 s), so that a connection left open would show.
    const server = await start({ SHUTDOWN_GRACE_MS: '20000' });
    const used = await idleKeepAliveConnection(server.baseUrl, prepared.adminKey);
    const unused = await openRawConnection(server.baseUrl);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const ends = await Promise.all([used.ended, unused.ended]);
    const closedAfterMs = Date.now() - signalled;
    const exit = await server.exited;

    expect(ends).toEqual([{ kind: 'fin' }, { kind: 'fin' }]);
    expect(closedAfterMs).toBeLessThan(4000);
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
  });

  it('cuts a request still in flight when SHUTDOWN_GRACE_MS runs out, then exits 0', async () => {
    const graceMs = 1500;
    const server = await start({ SHUTDOWN_GRACE_MS: String(graceMs) });
    const connection = await openRawConnection(server.baseUrl);
    const update = rawRequest(
      'POST',
      apiKeyPath(prepared.keyIds[0] as string),
      authHeaders(prepared.adminKey, { 'content-type': 'application/json' }),
      JSON.stringify({ name: 'never finished' }),
    );
    // The head and a part of the body: the handler waits for the rest, which never comes.
    await connection.write(update.slice(0, -5));
    const response = connection.nextResponse(60_000);
    response.catch(() => undefined);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const end = await connection.ended;
    const cutAfterMs = Date.now() - signalled;
    const exit = await server.exited;

    await expect(response).rejects.toThrow(/before a complete response/);
    expect(['fin', 'ECONNRESET']).toContain(end.kind === 'fin' ? end.kind : end.code);
    expect(cutAfterMs).toBeGreaterThanOrEqual(graceMs - 50);
    // Far below the request timeout (30 s) that would otherwise end it.
    expect(cutAfterMs).toBeLessThan(graceMs + 8000);
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
    expect(server.lines.at(-1)?.msg).toBe('stopped');
  });

  it('answers /ready with 503 during SHUTDOWN_DELAY_MS while serving other requests, keep-alive included', async () => {
    const delayMs = 3000;
    const server = await start({ SHUTDOWN_DELAY_MS: String(delayMs) });
    const kept = await idleKeepAliveConnection(server.baseUrl, prepared.adminKey);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await server.waitForLine((line) => line.msg === 'shutting down');
    const ready = await fetch(`${server.baseUrl}/ready`);
    const readyBody = (await ready.json()) as { checks: Record<string, unknown> };
    const fresh = await fetch(`${server.baseUrl}${API_KEYS_PATH}`, { headers: authHeaders(prepared.adminKey) });
    await fresh.arrayBuffer();
    await kept.write(listRequest(prepared.adminKey));
    const onKeptConnection = await kept.nextResponse();
    const exit = await server.exited;
    const exitedAfterMs = Date.now() - signalled;

    expect(ready.status).toBe(503);
    expect(readyBody.checks.shutdown).toEqual({ status: 'fail', message: 'the server is shutting down' });
    expect(fresh.status).toBe(200);
    expect(isFullPage(onKeptConnection)).toBe(true);
    expect(onKeptConnection.headers.get('connection')).toBe('keep-alive');
    expect(exitedAfterMs).toBeGreaterThanOrEqual(delayMs);
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
  });

  it('skips the rest of SHUTDOWN_DELAY_MS on a second signal', async () => {
    const server = await start({ SHUTDOWN_DELAY_MS: '120000' });

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await server.waitForLine((line) => line.msg === 'shutting down');
    server.child.kill('SIGINT');
    const exit = await server.exited;

    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(30_000);
    expect(server.lines.map((line) => line.msg).slice(-3)).toEqual([
      'shutting down',
      'shutdown delay skipped',
      'stopped',
    ]);
  });
});
