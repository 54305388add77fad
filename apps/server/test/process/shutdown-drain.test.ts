import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  type ConnectionEnd,
  createTestDatabase,
  createTestKey,
  DEFAULT_ORGANIZATION,
  listeningUrl,
  openRawConnection,
  type PreparedDatabase,
  postgresAvailable,
  prepareDatabase,
  type RawConnection,
  type RawResponse,
  rawRequest,
  type ServerProcess,
  spawnServerProcess,
  startServerProcess,
  startTestServer,
  subscribeToChanges,
  type TestDatabase,
} from '@apikeys/server/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const CONNECTIONS = 20;
/** How often a drain is repeated where its outcome depends on how far the server had got when the drain began. */
const ROUNDS = 3;
/** The page size of the list requests: every page is full, so a response of several kilobytes. */
const PAGE = 20;
/** Server processes started, one after another, by the test of requests written just before SIGTERM. */
const PROCESS_ROUNDS = 2;
/** Connections of each kind (kept alive, not yet accepted) that carry requests written during the warm-up. */
const WARM_UP_CONNECTIONS = 12;

const listRequest = (adminKey: string) => rawRequest('GET', `${API_KEYS_PATH}?limit=${PAGE}`, authHeaders(adminKey));

const HEALTH_REQUEST = rawRequest('GET', '/health', {});
const READY_REQUEST = rawRequest('GET', '/ready', {});

/** Opens a connection and sends one request on it, so that it is established and idle (kept alive) afterwards. */
async function idleKeepAliveConnection(baseUrl: string, request: string): Promise<RawConnection> {
  const connection = await openRawConnection(baseUrl);
  await connection.write(request);
  const first = await connection.nextResponse();
  expect(first.status).toBe(200);
  expect(first.headers.get('connection')).toBe('keep-alive');
  return connection;
}

/** Takes an exclusive lock on `api_keys`: every statement that reads keys waits until `release()`. */
async function lockApiKeys(url: string) {
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  await lock.query('begin');
  await lock.query('lock table api_keys in access exclusive mode');
  return {
    async release() {
      try {
        await lock.query('commit');
      } finally {
        await lock.end();
      }
    },
  };
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
function expectAllAnsweredThenClosed(
  { answered, failures, ends, summary }: Awaited<ReturnType<typeof outcomes>>,
  context = '',
) {
  const message = `${context} ${summary}`.trim();
  expect(failures, message).toEqual([]);
  expect(ends, message).toEqual(Array(CONNECTIONS).fill({ kind: 'fin' }));
  expect(answered.every(isFullPage), message).toBe(true);
  expect(
    answered.map((response) => response.headers.get('connection')),
    message,
  ).toEqual(Array(CONNECTIONS).fill('close'));
}

/**
 * In a server process, libuv runs a signal's handler after the socket reads of the same poll, so requests that
 * reached the kernel before SIGTERM have been read when the shutdown begins; requests that arrive while it begins
 * have not. In process, the test begins the drain in the same tick as it writes, before the event loop has read a
 * byte: every request then sits unread in the kernel when the drain begins, every time. Connections opened together
 * mostly wait in the listener's backlog at that moment: the server accepts one per loop turn.
 */
describe('the drain, begun while requests sit unread in the kernel', () => {
  async function serverWithFullPages() {
    const server = await startTestServer();
    for (let i = 0; i < PAGE; i++) {
      await createTestKey(server.store, DEFAULT_ORGANIZATION.id, { name: `key ${i}` });
    }
    return server;
  }

  it(`answers ${CONNECTIONS} requests on idle keep-alive connections with Connection: close, then FIN`, async () => {
    const server = await serverWithFullPages();
    const connections = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => idleKeepAliveConnection(server.baseUrl, listRequest(server.adminKey))),
    );

    for (const connection of connections) {
      void connection.write(listRequest(server.adminKey));
    }
    const closed = server.close();
    const result = await outcomes(connections);
    await closed;

    expectAllAnsweredThenClosed(result);
  });

  it(`answers requests on ${CONNECTIONS} fresh and ${CONNECTIONS} idle connections, round after round`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const server = await serverWithFullPages();
      const idle = await Promise.all(
        Array.from({ length: CONNECTIONS }, () =>
          idleKeepAliveConnection(server.baseUrl, listRequest(server.adminKey)),
        ),
      );
      // Established by the kernel, most of them not yet accepted by the server.
      const fresh = await Promise.all(Array.from({ length: CONNECTIONS }, () => openRawConnection(server.baseUrl)));

      for (const connection of [...fresh, ...idle]) {
        void connection.write(listRequest(server.adminKey));
      }
      const closed = server.close();
      const [onFresh, onIdle] = await Promise.all([outcomes(fresh), outcomes(idle)]);
      await closed;

      expectAllAnsweredThenClosed(onFresh, `round ${round}, fresh connections`);
      expectAllAnsweredThenClosed(onIdle, `round ${round}, idle connections`);
    }
  });

  it('answers every pipelined request, and only the last response closes the connection', async () => {
    const server = await serverWithFullPages();
    const connection = await idleKeepAliveConnection(server.baseUrl, listRequest(server.adminKey));

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

  /**
   * Freezes the server, opens `freshCount` connections (the kernel establishes them; the frozen server cannot accept
   * them), writes one request on each connection, kept and fresh, then sends SIGTERM and thaws the server: every
   * request sits unread in the kernel when the signal arrives. On thawing, the server reads the requests and the
   * connections waiting to be accepted, and runs its SIGTERM handler, in any order: the signal may reach a thread of
   * its own after the main thread has read the sockets. Resolves with the fresh connections once the server has
   * begun to shut down.
   */
  async function writeJustBeforeSigterm(
    server: ServerProcess,
    baseUrl: string,
    writes: { kept: readonly RawConnection[]; freshCount: number; request: (index: number) => string },
  ): Promise<RawConnection[]> {
    server.child.kill('SIGSTOP');
    const fresh = await Promise.all(Array.from({ length: writes.freshCount }, () => openRawConnection(baseUrl)));
    await Promise.all([...writes.kept, ...fresh].map((connection, index) => connection.write(writes.request(index))));
    server.child.kill('SIGTERM');
    server.child.kill('SIGCONT');
    await server.waitForLine((line) => line.msg === 'shutting down');
    return fresh;
  }

  it(`answers requests on ${CONNECTIONS} idle and ${CONNECTIONS} new connections written before SIGTERM`, async () => {
    for (let round = 1; round <= PROCESS_ROUNDS; round++) {
      const server = await start();
      const idle = await Promise.all(
        Array.from({ length: CONNECTIONS }, () =>
          idleKeepAliveConnection(server.baseUrl, listRequest(prepared.adminKey)),
        ),
      );

      // The lock keeps the pages waiting for the database until the server has begun to shut down, so every request
      // is in flight when the drain starts: each response says `Connection: close`. (Without the lock, on a busy
      // machine, the pages could be answered before the handler runs, and the connections kept alive until the drain
      // closes them.)
      const lock = await lockApiKeys(prepared.url);
      let fresh: RawConnection[];
      try {
        fresh = await writeJustBeforeSigterm(server, server.baseUrl, {
          kept: idle,
          freshCount: CONNECTIONS,
          request: () => listRequest(prepared.adminKey),
        });
      } finally {
        await lock.release();
      }
      const [onIdle, onFresh] = await Promise.all([outcomes(idle), outcomes(fresh)]);
      const exit = await server.exited;

      expectAllAnsweredThenClosed(onIdle, `round ${round}, idle connections`);
      expectAllAnsweredThenClosed(onFresh, `round ${round}, fresh connections`);
      expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
    }
  });

  it('answers every request written during the warm-up on SIGTERM, and exits 0 without becoming ready', async () => {
    // The lock holds the warm-up at its first request that reads keys, and the list requests, until the server has
    // begun to shut down: the signal comes during the warm-up however fast the machine.
    const lock = await lockApiKeys(prepared.url);
    const server = spawnServerProcess({ env: { DATABASE_URL: prepared.url } });
    running.push(server);
    const kinds = ['list', 'ready', 'health'] as const;
    const kindOf = (index: number) => kinds[index % kinds.length] as (typeof kinds)[number];
    const requests = { list: listRequest(prepared.adminKey), ready: READY_REQUEST, health: HEALTH_REQUEST };
    let kept: RawConnection[] = [];
    let fresh: RawConnection[] = [];
    try {
      const baseUrl = await listeningUrl(server);
      kept = await Promise.all(
        Array.from({ length: WARM_UP_CONNECTIONS }, () => idleKeepAliveConnection(baseUrl, HEALTH_REQUEST)),
      );
      fresh = await writeJustBeforeSigterm(server, baseUrl, {
        kept,
        freshCount: WARM_UP_CONNECTIONS,
        request: (index) => requests[kindOf(index)],
      });
    } finally {
      await lock.release();
    }
    const connections = [...kept, ...fresh];
    const { answered, failures, ends, summary } = await outcomes(connections);
    const exit = await server.exited;

    expect(failures, summary).toEqual([]);
    expect(ends, summary).toEqual(Array(connections.length).fill({ kind: 'fin' }));
    answered.forEach((response, index) => {
      const kind = kindOf(index);
      if (kind === 'list') {
        expect(isFullPage(response), `${kind}: ${response.status} ${response.body}`).toBe(true);
      } else if (kind === 'health') {
        expect([response.status, JSON.parse(response.body)]).toEqual([200, { status: 'ok' }]);
      } else {
        expect(response.status).toBe(503);
        expect(JSON.parse(response.body)).toMatchObject({
          status: 'not_ready',
          checks: { startup: { status: 'fail', message: 'the server is starting' } },
        });
      }
    });
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
    const messages = server.lines.map((line) => line.msg);
    expect(messages.indexOf('listening')).toBeLessThan(messages.indexOf('shutting down'));
    expect(messages).not.toContain('ready');
    expect(messages.at(-1)).toBe('stopped');
  });

  it('closes idle keep-alive connections, and one that never sent a request, cleanly (FIN) and promptly', async () => {
    // A grace far above Node's keep-alive timeout (5 s, plus 1 s), so that a connection left open would show.
    const server = await start({ SHUTDOWN_GRACE_MS: '20000' });
    const used = await idleKeepAliveConnection(server.baseUrl, listRequest(prepared.adminKey));
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

  it('ends change feed subscriptions at once, without waiting for the grace period, then exits 0', async () => {
    const server = await start({ SHUTDOWN_GRACE_MS: '20000' });
    const feeds = await Promise.all([1, 2, 3].map(() => subscribeToChanges(server.baseUrl, prepared.adminKey)));
    await Promise.all(feeds.map((feed) => feed.next((event) => event.type === 'subscribed')));

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await Promise.all(feeds.map((feed) => feed.ended(10_000)));
    const endedAfterMs = Date.now() - signalled;
    const exit = await server.exited;

    expect(endedAfterMs).toBeLessThan(4000);
    expect(exit, server.exitReason()).toEqual({ code: 0, signal: null });
    expect(server.lines.at(-1)?.msg).toBe('stopped');
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
    const kept = await idleKeepAliveConnection(server.baseUrl, listRequest(prepared.adminKey));

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
