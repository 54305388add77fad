import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  API_VERSION,
  DEFAULT_ORGANIZATION,
  parseRawResponse,
  type RawResponse,
  type ServerProcess,
  type StartedServerProcess,
  sendRaw,
  spawnServerProcess,
  startServerProcess,
} from '@apikeys/server/testing';
import { type ApiKeyRecord, openStore, parseDatabaseUrl } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const LIST = '/v1/organizations/api_keys';

interface Prepared {
  databaseUrl: string;
  adminKey: string;
  keyId: string;
}

/** Creates a migrated SQLite database with an admin key and one API key, then closes it. */
async function prepareDatabase(directory: string, name: string): Promise<Prepared> {
  const databaseUrl = `file:${join(directory, name, 'db.sqlite')}`;
  const { store, migrator } = await openStore(parseDatabaseUrl(databaseUrl));
  try {
    await migrator.migrateToLatest();
    const { secret } = await store.createAdminKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'durability admin',
    });
    const { apiKey } = await store.createApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      name: 'before',
      createdBy: { id: 'user_durability', type: 'user' },
    });
    return { databaseUrl, adminKey: secret, keyId: apiKey.id };
  } finally {
    await store.close();
  }
}

/** Connects a raw TCP socket to the server. */
async function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** Resolves with the first complete HTTP response (with a content-length) read from a raw socket. */
function readOneResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const check = () => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        return;
      }
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (received.length >= end + 4 + length) {
        resolve(parseRawResponse(received.subarray(0, end + 4 + length).toString('utf8')));
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      check();
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed before a full response: ${received.toString()}`)));
  });
}

/** Reads a key straight from the database file, with the server stopped. */
async function readKey(prepared: Prepared): Promise<ApiKeyRecord | undefined> {
  const { store } = await openStore(parseDatabaseUrl(prepared.databaseUrl));
  try {
    return await store.getApiKey(DEFAULT_ORGANIZATION.id, prepared.keyId);
  } finally {
    await store.close();
  }
}

describe('the server process', () => {
  let directory: string;
  const running: ServerProcess[] = [];

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-process-'));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.kill()));
  });
  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>) {
    const server = await startServerProcess({ env });
    running.push(server);
    return server;
  }

  it('keeps an acknowledged update after SIGKILL and a restart', async () => {
    const prepared = await prepareDatabase(directory, 'kill');
    const headers = { 'x-api-key': prepared.adminKey, 'vendor-version': API_VERSION };
    const first = await start({ DATABASE_URL: prepared.databaseUrl });

    const update = await fetch(`${first.baseUrl}${LIST}/${prepared.keyId}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'after', status: 'inactive' }),
    });
    expect(update.status).toBe(200);
    await update.text();
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await start({ DATABASE_URL: prepared.databaseUrl });
    const read = await fetch(`${second.baseUrl}${LIST}/${prepared.keyId}`, { headers });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: prepared.keyId, name: 'after', status: 'inactive' });
  });

  /**
   * Sends the headers and the first bytes of an update, so that the request is in flight and its handler waits for
   * the rest of the body; then SIGTERM; then the rest. Resolves with the response and when it arrived.
   */
  async function updateAcrossSigterm(server: StartedServerProcess, prepared: Prepared, name: string) {
    const body = JSON.stringify({ name });
    const head =
      `POST ${LIST}/${prepared.keyId} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${prepared.adminKey}\r\n` +
      `vendor-version: ${API_VERSION}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const socket = await openSocket(server.baseUrl);
    const response = readOneResponse(socket);

    socket.write(head + body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.child.kill('SIGTERM');
    await server.waitForLine((line) => line.msg === 'shutting down');
    // New connections are refused while the in-flight request is still open. The drain first accepts, for a few
    // loop turns, the connections the kernel already holds (connection-drain.ts), so one may still be answered.
    const connect = () =>
      fetch(`${server.baseUrl}${LIST}`).then(
        async (answer) => `accepted (${answer.status} ${await answer.text()})`,
        () => 'refused',
      );
    await expect.poll(connect, { timeout: 2000, interval: 50 }).toBe('refused');
    socket.write(body.slice(10));

    return { socket, response: await response, receivedAt: Date.now() };
  }

  it('shuts down gracefully on SIGTERM: an in-flight request completes, then it exits 0 with a stopped line', async () => {
    const prepared = await prepareDatabase(directory, 'term');
    const server = await start({ DATABASE_URL: prepared.databaseUrl });

    const { socket, response } = await updateAcrossSigterm(server, prepared, 'finished during shutdown');
    // This test is about the in-flight request; closing the connection is the client's part here (see the next test).
    socket.destroy();

    expect(response.status, response.body).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ id: prepared.keyId, name: 'finished during shutdown' });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const messages = server.lines.map((line) => line.msg);
    expect(messages).toContain('shutting down');
    expect(messages).toContain('stopped');
    expect(await readKey(prepared)).toMatchObject({ name: 'finished during shutdown' });
  });

  it('closes the connection of a request that was in flight at SIGTERM, so the exit does not wait for keep-alive', async () => {
    const prepared = await prepareDatabase(directory, 'term-keepalive');
    const server = await start({ DATABASE_URL: prepared.databaseUrl });

    const { socket, response, receivedAt } = await updateAcrossSigterm(server, prepared, 'done');
    const exit = await server.exited;
    const exitDelayMs = Date.now() - receivedAt;
    socket.destroy();

    expect(response.status).toBe(200);
    expect(exit).toEqual({ code: 0, signal: null });
    // Left at keep-alive, the idle connection holds server.close() up for the keep-alive timeout (5 s).
    expect(response.headers.get('connection')).toBe('close');
    expect(exitDelayMs).toBeLessThan(2000);
  });

  /** Starts a server, leaves an idle keep-alive connection open, and sends SIGTERM. */
  async function terminateIdle(name: string) {
    const prepared = await prepareDatabase(directory, name);
    const server = await start({ DATABASE_URL: prepared.databaseUrl });
    const warm = await fetch(`${server.baseUrl}${LIST}`, {
      headers: { 'x-api-key': prepared.adminKey, 'vendor-version': API_VERSION },
    });
    expect(warm.status).toBe(200);
    await warm.text();

    const started = Date.now();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    return { exit, elapsedMs: Date.now() - started, lines: server.lines };
  }

  it('shuts down on SIGTERM with no request in flight, exiting 0 at once after logging stopped', async () => {
    const { exit, elapsedMs, lines } = await terminateIdle('idle');

    expect(exit).toEqual({ code: 0, signal: null });
    // The idle keep-alive connection must not hold the shutdown up.
    expect(elapsedMs).toBeLessThan(3000);
    const messages = lines.map((line) => line.msg);
    expect(messages).toContain('shutting down');
    expect(messages).toContain('stopped');
  });

  it('writes its log lines to stdout in the order it logged them, up to the last one before exit', async () => {
    // The loss or reordering of the last lines is a race with the exit, so three servers stop at once.
    const runs = await Promise.all(['order-1', 'order-2', 'order-3'].map((name) => terminateIdle(name)));

    for (const { exit, lines } of runs) {
      expect(exit.code).toBe(0);
      const messages = lines.map((line) => line.msg);
      const times = lines.map((line) => String(line.time));
      expect(messages.slice(-2), JSON.stringify(messages)).toEqual(['shutting down', 'stopped']);
      expect(times, 'stdout order matches the time order').toEqual([...times].sort());
    }
  });

  it('writes a request log line while it keeps running, not only at exit', async () => {
    const prepared = await prepareDatabase(directory, 'log-live');
    const server = await start({ DATABASE_URL: prepared.databaseUrl });

    const response = await fetch(`${server.baseUrl}${LIST}`, {
      headers: { 'x-api-key': prepared.adminKey, 'vendor-version': API_VERSION },
    });
    await response.text();

    // Well within the flush interval of the log buffer (200 ms), never at exit.
    const line = await server.waitForLine((entry) => entry.msg === 'request', 2000);
    expect(line).toMatchObject({ request_id: response.headers.get('request-id'), status: 200 });
    expect(server.child.exitCode).toBeNull();
  });

  it('answers malformed HTTP with a JSON error in the real process too', async () => {
    const prepared = await prepareDatabase(directory, 'malformed');
    const server = await start({ DATABASE_URL: prepared.databaseUrl });

    const response = parseRawResponse(await sendRaw(server.baseUrl, 'BROKEN\r\n\r\n'));

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(response.body)).toMatchObject({ type: 'error', request_id: response.headers.get('request-id') });
  });

  describe('a bad configuration', () => {
    const CASES: { variable: string; value: string }[] = [
      { variable: 'PORT', value: 'abc' },
      { variable: 'PORT', value: '70000' },
      { variable: 'DATABASE_URL', value: 'postgres://x' },
      { variable: 'DATABASE_URL', value: 'mysql://x' },
      { variable: 'DATABASE_URL', value: 'file:' },
      { variable: 'LOG_LEVEL', value: 'loud' },
    ];

    it('makes the process exit non-zero with one clear line on stderr naming the variable', async () => {
      const results = await Promise.all(
        CASES.map(async ({ variable, value }) => {
          const server = spawnServerProcess({
            env: { DATABASE_URL: `file:${join(directory, 'config', 'db.sqlite')}`, [variable]: value },
          });
          running.push(server);
          const exit = await server.exited;
          return { variable, value, exit, stderr: server.stderr(), lines: server.lines };
        }),
      );

      for (const { variable, value, exit, stderr, lines } of results) {
        const context = `${variable}=${value}: ${stderr}`;
        expect(exit.code, context).not.toBe(0);
        expect(exit.code, context).not.toBeNull();
        const stderrLines = stderr.trimEnd().split('\n');
        expect(stderrLines, context).toHaveLength(1);
        expect(stderrLines[0], context).toContain(variable);
        expect(stderr, context).not.toMatch(/\bat\s+\S.*:\d+:\d+/);
        expect(lines.some((line) => line.msg === 'listening')).toBe(false);
      }
    });
  });
});
