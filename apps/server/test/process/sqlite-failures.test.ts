import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LATEST_API_VERSION, type AnyOperationId as OperationId } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  DEFAULT_ORGANIZATION,
  expectUnavailable,
  fetchText,
  type LogLine,
  type ServerProcess,
  SqliteLockHolder,
  type StartedServerProcess,
  spawnServerProcess,
  startServerProcess,
  type TextResponse,
} from '@apikeys/server/testing';
import {
  DatabaseUnavailableError,
  openStore,
  parseDatabaseUrl,
  type Store,
  type UnavailableReason,
  type WriteOutcome,
} from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { mountsAvailable, mountTmpfs, type Tmpfs } from './tmpfs.js';

/** The server's folder: child scripts run there, so that `require('better-sqlite3')` finds its driver. */
const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));

/** DATABASE_TIMEOUT_MS of every server here: how long a write waits for a lock that another process holds. */
const DEADLINE_MS = 1000;
/** How much later than the deadline a 503 may come on a loaded 2-core machine. */
const DEADLINE_SLACK_MS = 500;
/** The longest `/health` may take while writes wait for the lock (issue 29). */
const HEALTH_LIMIT_MS = 50;

/**
 * What a refused write did, by the reason SQLite refused it: SQLite undoes a write that found the lock held, the file
 * read-only or the disk full; an I/O error may come after the commit record was written.
 */
const WRITE_OUTCOMES: Partial<Record<UnavailableReason, WriteOutcome>> = {
  busy: 'not_made',
  read_only: 'not_made',
  full: 'not_made',
  io_error: 'unknown',
};

/** The three keys every database starts with; each scenario updates them. */
const KEYS = ['a', 'b', 'c'] as const;
type KeyName = (typeof KEYS)[number];

interface Prepared {
  path: string;
  databaseUrl: string;
  adminKey: string;
  keyIds: Record<KeyName, string>;
}

/** Creates a migrated SQLite database with an admin key and the keys of KEYS (named after themselves), then closes it. */
async function prepareDatabase(directory: string): Promise<Prepared> {
  const path = join(directory, 'db.sqlite');
  const databaseUrl = `file:${path}`;
  const { store, migrator } = await openStore(parseDatabaseUrl(databaseUrl));
  try {
    await migrator.migrateToLatest();
    const { secret } = await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'failures admin' });
    const keyIds = {} as Record<KeyName, string>;
    for (const key of KEYS) {
      const { apiKey } = await store.createApiKey({
        organizationId: DEFAULT_ORGANIZATION.id,
        name: key,
        createdBy: { id: 'user_failures', type: 'user' },
      });
      keyIds[key] = apiKey.id;
    }
    return { path, databaseUrl, adminKey: secret, keyIds };
  } finally {
    await store.close();
  }
}

/** Runs a script with better-sqlite3 in a child process (the tests have no types for the driver); returns stdout. */
function runSqliteScript(script: string, args: string[]): string {
  return execFileSync(process.execPath, ['-e', script, ...args], { cwd: SERVER_DIR, encoding: 'utf8' });
}

/** `PRAGMA integrity_check` of a database file, run with no server on it. */
function integrityCheck(path: string): string[] {
  const script = `
    const Database = require('better-sqlite3');
    const database = new Database(process.argv[1]);
    process.stdout.write(JSON.stringify(database.pragma('integrity_check', { simple: false })));
    database.close();`;
  const rows = JSON.parse(runSqliteScript(script, [path])) as { integrity_check: string }[];
  return rows.map((row) => row.integrity_check);
}

/** The name of every key, read straight from the database file with no server on it. */
async function storedNames(prepared: Prepared): Promise<Record<KeyName, string | undefined>> {
  const { store } = await openStore(parseDatabaseUrl(prepared.databaseUrl));
  try {
    const names = {} as Record<KeyName, string | undefined>;
    for (const key of KEYS) {
      names[key] = (await store.getApiKey(DEFAULT_ORGANIZATION.id, prepared.keyIds[key]))?.name;
    }
    return names;
  } finally {
    await store.close();
  }
}

/** The ID and name of every key of the default organization, newest first. */
async function allKeys(store: Store): Promise<{ id: string; name: string }[]> {
  const keys: { id: string; name: string }[] = [];
  let cursor: { direction: 'after'; id: string } | undefined;
  for (;;) {
    const page = await store.listApiKeys({ organizationId: DEFAULT_ORGANIZATION.id, limit: 1000, cursor });
    if (page.kind !== 'page') {
      throw new Error('a page cursor named no key');
    }
    keys.push(...page.keys.map(({ id, name }) => ({ id, name })));
    const last = page.keys.at(-1);
    if (!page.hasMore || last === undefined) {
      return keys;
    }
    cursor = { direction: 'after', id: last.id };
  }
}

/** How a store call ended, in a word: its unavailable reason, or what else happened. */
function outcome(result: PromiseSettledResult<unknown>): string {
  if (result.status === 'fulfilled') {
    return 'done';
  }
  const error = result.reason as Error;
  return error instanceof DatabaseUnavailableError ? error.reason : `${error.name}: ${error.message}`;
}

/** The headers of a JSON request in the latest API version. */
const latestJson = { 'vendor-version': LATEST_API_VERSION, 'content-type': 'application/json' };

/** A response with how long it took. */
interface Timed extends TextResponse {
  elapsedMs: number;
}

async function timedFetch(url: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now();
  const result = await fetchText(url, init);
  return { ...result, elapsedMs: Math.round(performance.now() - started) };
}

/**
 * Drives one server process, and keeps the name of each key that the server acknowledged (or another process
 * committed): reads must answer it, and the database must hold it at the end.
 */
class Client {
  readonly acknowledged: Partial<Record<KeyName, string>> = {};

  constructor(
    readonly server: StartedServerProcess,
    readonly prepared: Prepared,
  ) {}

  read(key: KeyName): Promise<Timed> {
    return timedFetch(`${this.server.baseUrl}${apiKeyPath(this.prepared.keyIds[key])}`, {
      headers: authHeaders(this.prepared.adminKey),
    });
  }

  update(key: KeyName, name: string): Promise<Timed> {
    return timedFetch(`${this.server.baseUrl}${apiKeyPath(this.prepared.keyIds[key])}`, {
      method: 'POST',
      headers: authHeaders(this.prepared.adminKey, { 'content-type': 'application/json' }),
      body: JSON.stringify({ name }),
    });
  }

  /** Creates a key (API version 2026-10-21). */
  create(name: string): Promise<Timed> {
    return timedFetch(`${this.server.baseUrl}${API_KEYS_PATH}`, {
      method: 'POST',
      headers: authHeaders(this.prepared.adminKey, latestJson),
      body: JSON.stringify({ name }),
    });
  }

  /** Rotates a key with a day's grace period (API version 2026-10-21). */
  rotate(key: KeyName): Promise<Timed> {
    return timedFetch(`${this.server.baseUrl}${apiKeyPath(this.prepared.keyIds[key])}/rotate`, {
      method: 'POST',
      headers: authHeaders(this.prepared.adminKey, latestJson),
      body: JSON.stringify({ grace_period_seconds: 86_400 }),
    });
  }

  /** Updates a key, expects 200 with the new name, and records the name as acknowledged. */
  async expectUpdated(key: KeyName, name: string): Promise<void> {
    const result = await this.update(key, name);
    expect(result.response.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ id: this.prepared.keyIds[key], name });
    this.acknowledged[key] = name;
  }

  /** Reads a key and expects 200 with the last name acknowledged for it (or its first one). */
  async expectRead(key: KeyName): Promise<Timed> {
    const result = await this.read(key);
    expect(result.response.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ id: this.prepared.keyIds[key], name: this.acknowledged[key] ?? key });
    return result;
  }

  /**
   * Expects the 503 contract (error shape, message, `retry-after`, one warning line with this request ID) with one of
   * `reasons` in the log, and the message and `write_outcome` of what the write did; returns the log line.
   */
  async expectUnavailable(
    result: Timed,
    reasons: readonly UnavailableReason[],
    operationId: OperationId = 'updateApiKey',
  ): Promise<LogLine> {
    expect(result.response.status, result.text).toBe(503);
    const requestId = result.response.headers.get('request-id');
    // The log is flushed every 200 ms.
    const line = await this.server.waitForLine(
      (entry) => entry.msg === 'database unavailable' && entry.request_id === requestId,
      5000,
    );
    expect(reasons, JSON.stringify(line)).toContain(line.reason);
    expectUnavailable(
      this.server.lines.map((entry) => JSON.stringify(entry)),
      result,
      operationId,
      operationId === 'updateApiKey' ? undefined : LATEST_API_VERSION,
      WRITE_OUTCOMES[line.reason as UnavailableReason],
    );
    return line;
  }

  /** Stops the server (SIGTERM: it must exit 0, so it never crashed) and checks the file and every acknowledged name. */
  async stopAndVerify(): Promise<void> {
    expect(this.server.exitReason(), 'the server kept running').toBeUndefined();
    expect(await this.server.stop()).toEqual({ code: 0, signal: null });
    await this.verifyFile();
  }

  async verifyFile(): Promise<void> {
    expect(integrityCheck(this.prepared.path)).toEqual(['ok']);
    const names = await storedNames(this.prepared);
    for (const key of KEYS) {
      expect(names[key], `key ${key}`).toBe(this.acknowledged[key] ?? key);
    }
  }
}

const running: ServerProcess[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.kill()));
});

/** Environment of every server here; rate limiting is off, so that only the database can refuse a request. */
function serverEnv(prepared: Prepared): Record<string, string> {
  return {
    DATABASE_URL: prepared.databaseUrl,
    DATABASE_TIMEOUT_MS: String(DEADLINE_MS),
    RATE_LIMIT_PER_MINUTE: '0',
  };
}

async function startClient(prepared: Prepared): Promise<Client> {
  const server = await startServerProcess({ env: serverEnv(prepared) });
  running.push(server);
  return new Client(server, prepared);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('a SQLite database locked by another process past the deadline', () => {
  /** A database with a server on it, and another process holding the write lock. */
  async function lockedDatabase() {
    const directory = mkdtempSync(join(tmpdir(), 'apikeys-locked-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const prepared = await prepareDatabase(directory);
    const client = await startClient(prepared);
    await client.expectUpdated('a', 'before the lock');
    const holder = await SqliteLockHolder.take(prepared.path, {
      sql: 'update api_keys set name = ? where id = ?',
      parameters: ['written by the lock holder', prepared.keyIds.c],
    });
    onTestFinished(() => holder.kill());
    return { client, holder };
  }

  it('gives 503 busy to an update after about the deadline, answers reads, and takes updates again at release', async () => {
    const { client, holder } = await lockedDatabase();
    // WAL: a read does not wait for the write lock.
    const idleRead = await client.expectRead('a');
    expect(idleRead.elapsedMs).toBeLessThan(DEADLINE_MS / 2);

    const update = client.update('a', 'during the lock');
    // Sent while the update waits for the lock (on timers: the event loop goes on serving reads).
    await sleep(100);
    const read = await client.expectRead('b');
    const refused = await update;

    await client.expectUnavailable(refused, ['busy']);
    expect(refused.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS * 0.9);
    expect(refused.elapsedMs).toBeLessThan(DEADLINE_MS + DEADLINE_SLACK_MS);
    expect(read.elapsedMs).toBeLessThan(DEADLINE_MS / 2);
    // The refused update changed nothing.
    await client.expectRead('a');

    await holder.release();
    client.acknowledged.c = 'written by the lock holder';
    await client.expectRead('c');
    await client.expectUpdated('a', 'after the lock');
    await client.expectUpdated('b', 'after the lock');
    await client.stopAndVerify();
  });

  // Group commit waits for the lock on timers, not inside SQLite: a later update gets a deadline of its own, and a read
  // is answered while the updates wait.
  it('answers a request that arrives while an update waits for the lock within the deadline as well', async () => {
    const { client } = await lockedDatabase();

    const first = client.update('a', 'first during the lock');
    await sleep(200);
    const second = client.update('b', 'second during the lock');
    await sleep(100);
    const read = client.read('a');
    const [firstRefused, secondRefused, readDuring] = await Promise.all([first, second, read]);

    await client.expectUnavailable(firstRefused, ['busy']);
    await client.expectUnavailable(secondRefused, ['busy']);
    expect(readDuring.response.status).toBe(200);
    expect(firstRefused.elapsedMs).toBeLessThan(DEADLINE_MS + DEADLINE_SLACK_MS);
    expect(secondRefused.elapsedMs).toBeLessThan(DEADLINE_MS + DEADLINE_SLACK_MS);
    expect(readDuring.elapsedMs).toBeLessThan(200);
  });
  // SQLite's busy handler sleeps on the event loop: a write waiting in it would hold every request, /health included.
  it('answers /health at once while a create, a rotation and an update wait for the lock; 503s at the deadline', async () => {
    const { client, holder } = await lockedDatabase();
    let probing = true;
    const healthMs: number[] = [];
    const probes = (async () => {
      while (probing) {
        const health = await timedFetch(`${client.server.baseUrl}/health`);
        expect(health.response.status, health.text).toBe(200);
        healthMs.push(health.elapsedMs);
        await sleep(5);
      }
    })();
    const writes: [OperationId, Promise<Timed>][] = [
      ['createApiKey', client.create('created during the lock')],
      ['rotateApiKey', client.rotate('b')],
      ['updateApiKey', client.update('a', 'during the lock')],
    ];
    const refused = await Promise.all(writes.map(([, result]) => result));
    probing = false;
    await probes;

    if (process.env.DEADLINE_FIGURES) {
      const refusedMs = refused.map((result) => result.elapsedMs).join(', ');
      const slowest = Math.max(...healthMs);
      process.stderr.write(
        `[sqlite lock] writes refused after ${refusedMs} ms; ${healthMs.length} /health probes, slowest ${slowest} ms\n`,
      );
    }
    for (const [index, [operationId]] of writes.entries()) {
      const result = refused[index] as Timed;
      await client.expectUnavailable(result, ['busy'], operationId);
      expect(result.elapsedMs, operationId).toBeGreaterThanOrEqual(DEADLINE_MS * 0.9);
      expect(result.elapsedMs, operationId).toBeLessThan(DEADLINE_MS + DEADLINE_SLACK_MS);
    }
    expect(healthMs.length).toBeGreaterThan(DEADLINE_MS / HEALTH_LIMIT_MS);
    expect(Math.max(...healthMs)).toBeLessThan(HEALTH_LIMIT_MS);

    await holder.release();
    client.acknowledged.c = 'written by the lock holder';
    expect((await client.create('created after the lock')).response.status).toBe(200);
    const rotated = await client.rotate('b');
    expect(rotated.response.status, rotated.text).toBe(200);
    await client.expectUpdated('a', 'after the lock');
    await client.stopAndVerify();
  });
});

describe.runIf(mountsAvailable())('a SQLite database on a file system that fails', () => {
  function mount(sizeKiB: number): Tmpfs {
    const tmpfs = mountTmpfs(sizeKiB);
    onTestFinished(() => tmpfs.dispose());
    return tmpfs;
  }

  it('gives 503 to updates on a full disk while reads answer, and takes updates again once there is room', async () => {
    const tmpfs = mount(1024);
    const prepared = await prepareDatabase(tmpfs.directory);
    const client = await startClient(prepared);
    await client.expectUpdated('a', 'before the disk filled');

    expect(tmpfs.fill()).toBeGreaterThan(0);
    // Two at once (one batch of the group commit, most likely), then one alone.
    const together = await Promise.all([client.update('a', 'on a full disk'), client.update('b', 'on a full disk')]);
    const alone = await client.update('c', 'on a full disk');
    for (const refused of [...together, alone]) {
      await client.expectUnavailable(refused, ['full', 'io_error']);
      expect(refused.elapsedMs).toBeLessThan(DEADLINE_MS);
    }
    // The refused updates changed nothing.
    for (const key of KEYS) {
      await client.expectRead(key);
    }

    tmpfs.unfill();
    await client.expectUpdated('a', 'after the disk had room');
    await client.expectUpdated('b', 'after the disk had room');
    await client.stopAndVerify();
  });

  // Below the server, on the store it uses: a group commit this large (the updates of one turn of the event loop)
  // cannot be produced through HTTP on demand.
  it('fails a whole batch of updates as full when a full disk makes SQLite roll it back midway', async () => {
    const tmpfs = mount(64 * 1024);
    const path = join(tmpfs.directory, 'db.sqlite');
    const location = parseDatabaseUrl(`file:${path}`);
    const seeded = await openStore(location);
    await seeded.migrator.migrateToLatest();
    await seedApiKeys(seeded.store, {
      organizationId: DEFAULT_ORGANIZATION.id,
      count: 20_000,
      workspaces: 3,
      users: 5,
      seed: 1,
    });
    const keys = await allKeys(seeded.store);
    // Closing deletes the WAL that the bulk load grew: a WAL with room left takes writes even on a full disk.
    await seeded.store.close();
    const { store } = await openStore(location);
    let open = true;
    onTestFinished(async () => {
      if (open) {
        await store.close();
      }
    });
    // Spread over the file, so that the batch dirties more pages than SQLite's page cache holds (2 MiB) and a write
    // spills them to the WAL in the middle of the transaction, where the full disk makes SQLite roll it all back.
    const targets = keys.filter((_, index) => index % 10 === 0);

    tmpfs.fill();
    const update = (key: { id: string }, name: string) => store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name });
    const refused = await Promise.allSettled(targets.map((key) => update(key, 'on a full disk')));
    expect(new Set(refused.map(outcome))).toEqual(new Set(['full']));

    tmpfs.unfill();
    const [first] = targets;
    if (first === undefined) {
      throw new Error('no keys were seeded');
    }
    expect(await update(first, 'after the disk had room')).toMatchObject({ name: 'after the disk had room' });
    open = false;
    await store.close();

    expect(integrityCheck(path)).toEqual(['ok']);
    const reopened = await openStore(location);
    try {
      const expected = keys.map((key) => (key === first ? { ...key, name: 'after the disk had room' } : key));
      expect(await allKeys(reopened.store)).toEqual(expected);
    } finally {
      await reopened.store.close();
    }
  });

  /**
   * Linux refuses to remount a file system read-only while a process has a file of it open to write (`mount point
   * is busy`), and a running server always has: so the file system is made read-only between a crash and a start.
   * A crash leaves the WAL and its index behind, and SQLite then opens the database read-only.
   */
  async function serverOnReadOnlyFileSystem() {
    const tmpfs = mount(1024);
    const prepared = await prepareDatabase(tmpfs.directory);
    const crashed = await startClient(prepared);
    await crashed.expectUpdated('a', 'before the crash');
    await crashed.server.kill();
    tmpfs.remount('ro');
    const client = await startClient(prepared);
    Object.assign(client.acknowledged, crashed.acknowledged);
    return { tmpfs, client };
  }

  it('gives 503 read_only to updates on a read-only file system, and answers reads', async () => {
    const { tmpfs, client } = await serverOnReadOnlyFileSystem();

    await client.expectRead('a');
    const refused = await client.update('a', 'on a read-only file system');
    await client.expectUnavailable(refused, ['read_only', 'io_error']);
    expect(refused.elapsedMs).toBeLessThan(DEADLINE_MS);
    await client.expectRead('a');

    expect(await client.server.stop()).toEqual({ code: 0, signal: null });
    tmpfs.remount('rw');
    await client.verifyFile();
  });

  // SQLite keeps a connection it opened read-only so when the file becomes writable: the server says so at start, and
  // a restart takes updates again. This test holds that documented behaviour.
  it('warns at start that the database is read-only, and takes updates again once restarted read-write', async () => {
    const { tmpfs, client } = await serverOnReadOnlyFileSystem();
    const warning = await client.server.waitForLine((line) => String(line.msg).startsWith('the database is read-only'));
    expect(warning).toMatchObject({ level: 40, msg: expect.stringMatching(/restarted on a writable file system$/) });
    await client.expectUnavailable(await client.update('a', 'on a read-only file system'), ['read_only']);

    tmpfs.remount('rw');
    await client.expectUnavailable(await client.update('b', 'still read-only until a restart'), ['read_only']);
    expect(await client.server.stop()).toEqual({ code: 0, signal: null });

    const restarted = await startClient(client.prepared);
    Object.assign(restarted.acknowledged, client.acknowledged);
    await restarted.expectUpdated('b', 'after the restart on a writable file system');
    await restarted.stopAndVerify();
  });

  it('refuses to start, with one line on stderr, on a read-only file system with a cleanly closed database', async () => {
    const tmpfs = mount(1024);
    const prepared = await prepareDatabase(tmpfs.directory);
    tmpfs.remount('ro');

    const server = spawnServerProcess({ env: serverEnv(prepared) });
    running.push(server);
    const exit = await server.exited;

    const stderr = server.stderr();
    expect(exit, stderr).toEqual({ code: 1, signal: null });
    const lines = stderr.trimEnd().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain(prepared.path);
    expect(lines[0]).toContain('DATABASE_URL');
    expect(stderr).not.toMatch(/\bat\s+\S.*:\d+:\d+/);
    expect(server.lines.some((line) => line.msg === 'listening')).toBe(false);
    tmpfs.remount('rw');
    expect(integrityCheck(prepared.path)).toEqual(['ok']);
  });
});
