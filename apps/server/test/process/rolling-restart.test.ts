import { setTimeout as sleep } from 'node:timers/promises';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  closedPort,
  createTestDatabase,
  DEFAULT_ORGANIZATION,
  deployDocHaproxyConfig,
  type PreparedDatabase,
  type PrivateHaproxy,
  postgresAvailable,
  prepareDatabase,
  type ServerProcess,
  type StartedServerProcess,
  startPrivateHaproxy,
  startServerProcess,
  type TestDatabase,
} from '@apikeys/server/testing';
import { openStore, parseDatabaseUrl } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BACKEND = 'apikeys_replicas';
const REPLICAS = ['replica1', 'replica2'] as const;
type ReplicaName = (typeof REPLICAS)[number];

/** Above HAProxy's detection time in that configuration: `inter 1s` × `fall 2`, plus one interval. */
const SHUTDOWN_DELAY_MS = 4000;
const READERS = 4;
const WRITERS = 2;
const KEYS_PER_WRITER = 10;
/** Each loop's pause between two requests: a steady load that leaves the two cores room for the restarts. */
const PAUSE_MS = 5;
/** Requests a replica process must have served before the next step, so that each step proves something. */
const SERVED_PER_STEP = 50;

type Kind = 'list' | 'get' | 'update';

/** Reads and updates sent through HAProxy in concurrent loops until stopped; counts every outcome. */
class SteadyLoad {
  readonly counts: Record<Kind, number> = { list: 0, get: 0, update: 0 };
  readonly failures: string[] = [];
  /** Per key, the name of its last acknowledged rename. */
  readonly acknowledged = new Map<string, string>();
  readonly #loops: Promise<void>[];
  #running = true;
  readonly #started = Date.now();
  #stoppedAt = 0;

  constructor(
    private readonly url: string,
    private readonly prepared: PreparedDatabase,
  ) {
    const readers = Array.from({ length: READERS }, (_, reader) => this.#read(reader));
    const writers = Array.from({ length: WRITERS }, (_, writer) => this.#write(writer));
    this.#loops = [...readers, ...writers];
  }

  get total(): number {
    return this.counts.list + this.counts.get + this.counts.update;
  }

  get durationMs(): number {
    return (this.#stoppedAt || Date.now()) - this.#started;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    this.#stoppedAt ||= Date.now();
  }

  /** Sends one request; resolves with its JSON body when it is a 200, or records the failure and resolves undefined. */
  async #send(kind: Kind, path: string, init: RequestInit = {}): Promise<unknown> {
    this.counts[kind]++;
    try {
      const headers = authHeaders(this.prepared.adminKey, init.body ? { 'content-type': 'application/json' } : {});
      const response = await fetch(`${this.url}${path}`, { ...init, headers });
      const text = await response.text();
      if (response.status !== 200) {
        this.failures.push(`${kind} ${path}: ${response.status} ${text.slice(0, 200)}`);
        return undefined;
      }
      return JSON.parse(text) as unknown;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      this.failures.push(`${kind} ${path}: ${cause?.code ?? cause?.message ?? String(error)}`);
      return undefined;
    }
  }

  async #read(reader: number): Promise<void> {
    const ids = this.prepared.keyIds;
    for (let n = 0; this.#running; n++) {
      if ((n + reader) % 2 === 0) {
        await this.#send('list', `${API_KEYS_PATH}?limit=20`);
      } else {
        await this.#send('get', apiKeyPath(ids[(reader * 7 + n) % ids.length] as string));
      }
      await sleep(PAUSE_MS);
    }
  }

  async #write(writer: number): Promise<void> {
    const keys = this.prepared.keyIds.slice(writer * KEYS_PER_WRITER, (writer + 1) * KEYS_PER_WRITER);
    for (let n = 0; this.#running; n++) {
      const id = keys[n % keys.length] as string;
      const name = `rolling ${writer}.${n}`;
      const body = await this.#send('update', apiKeyPath(id), { method: 'POST', body: JSON.stringify({ name }) });
      if (body !== undefined) {
        if ((body as { name?: unknown }).name === name) {
          this.acknowledged.set(id, name);
        } else {
          this.failures.push(`update ${id}: acknowledged ${JSON.stringify(body)} for ${name}`);
        }
      }
      await sleep(PAUSE_MS);
    }
  }
}

/** The API requests a replica process has logged (the probes are logged at debug level, so not counted). */
const served = (replica: ServerProcess) => replica.lines.filter((line) => line.msg === 'request').length;

async function waitUntilServed(replica: ServerProcess, count: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (served(replica) < count) {
    if (Date.now() > deadline) {
      throw new Error(`replica ${replica.pid} served ${served(replica)} requests, not ${count}, in ${timeoutMs} ms`);
    }
    await sleep(50);
  }
}

describe.runIf(await postgresAvailable())('a rolling restart of two replicas behind HAProxy', () => {
  let database: TestDatabase | undefined;
  let prepared: PreparedDatabase;
  let haproxy: PrivateHaproxy | undefined;
  let load: SteadyLoad | undefined;
  const ports = {} as Record<ReplicaName, number>;
  /** Every process of each replica, in start order: the one running is the last. */
  const processes: Record<ReplicaName, StartedServerProcess[]> = { replica1: [], replica2: [] };

  async function startReplica(name: ReplicaName): Promise<StartedServerProcess> {
    const replica = await startServerProcess({
      env: {
        DATABASE_URL: prepared.url,
        PORT: String(ports[name]),
        DATABASE_POOL_SIZE: '4',
        SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      },
    });
    processes[name].push(replica);
    return replica;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    prepared = await prepareDatabase(database.url, { apiKeys: 60 });
    for (const name of REPLICAS) {
      ports[name] = await closedPort();
    }
    await Promise.all(REPLICAS.map(startReplica));
    haproxy = await startPrivateHaproxy(deployDocHaproxyConfig(), ({ listen, adminSocket }) => ({
      APIKEYS_LB_LISTEN: listen,
      APIKEYS_LB_ADMIN_SOCKET: adminSocket,
      APIKEYS_REPLICA_1: `127.0.0.1:${ports.replica1}`,
      APIKEYS_REPLICA_2: `127.0.0.1:${ports.replica2}`,
    }));
    for (const name of REPLICAS) {
      await haproxy.waitForStatus(BACKEND, name, 'UP');
    }
  });

  afterAll(async () => {
    await load?.stop();
    await Promise.all(Object.values(processes).flatMap((started) => started.map((replica) => replica.kill())));
    await haproxy?.stop();
    await database?.drop();
  });

  it('restarts each replica in turn under load: no failed request, no lost update', async () => {
    const proxy = haproxy as PrivateHaproxy;
    load = new SteadyLoad(proxy.url, prepared);
    const steps: string[] = [];

    for (const name of REPLICAS) {
      const stopping = processes[name].at(-1) as StartedServerProcess;
      // Both replicas serve before each step (and the restarted one after it): otherwise the test proves nothing.
      await Promise.all(
        REPLICAS.map((each) => waitUntilServed(processes[each].at(-1) as ServerProcess, SERVED_PER_STEP)),
      );

      stopping.child.kill('SIGTERM');
      const downAfterMs = await proxy.waitForStatus(BACKEND, name, 'DOWN', SHUTDOWN_DELAY_MS * 2);
      const exit = await stopping.exited;
      expect(exit, stopping.exitReason()).toEqual({ code: 0, signal: null });
      // HAProxy took it out while it still served: before its listener closed.
      expect(downAfterMs).toBeLessThan(SHUTDOWN_DELAY_MS);

      const restarted = await startReplica(name);
      const upAfterMs = await proxy.waitForStatus(BACKEND, name, 'UP');
      await waitUntilServed(restarted, SERVED_PER_STEP);
      steps.push(`${name} down after ${downAfterMs} ms, up ${upAfterMs} ms after its restart`);
    }
    await load.stop();

    const stats = await proxy.stats();
    const backend = stats.get(`${BACKEND}/BACKEND`);
    const opened = await openStore(parseDatabaseUrl(prepared.url), { poolSize: 2 });
    const lost: string[] = [];
    try {
      for (const [id, name] of load.acknowledged) {
        const stored = await opened.store.getApiKey(DEFAULT_ORGANIZATION.id, id);
        if (stored?.name !== name) {
          lost.push(`${id}: acknowledged ${name}, stored ${stored?.name}`);
        }
      }
    } finally {
      await opened.store.close();
    }
    const servedBy = REPLICAS.map((name) => `${name} ${processes[name].map(served).join(' then ')}`);
    const seconds = load.durationMs / 1000;
    process.stdout.write(
      `rolling restart: ${seconds.toFixed(1)} s, ${READERS + WRITERS} concurrent loops, ` +
        `${Math.round(load.total / seconds)} requests/s; ${load.counts.list} list, ${load.counts.get} get, ` +
        `${load.counts.update} update; ${load.failures.length} failed, ${lost.length} lost updates; ` +
        `haproxy retries ${backend?.wretr}, redispatches ${backend?.wredis}; served by ${servedBy.join(', ')}; ` +
        `${steps.join('; ')}\n`,
    );

    expect(load.failures).toEqual([]);
    expect(lost).toEqual([]);
    // The readiness check and the delay did the work: HAProxy never had to retry a request on another replica.
    expect({ retries: backend?.wretr, redispatches: backend?.wredis }).toEqual({ retries: '0', redispatches: '0' });
    expect(load.acknowledged.size).toBe(WRITERS * KEYS_PER_WRITER);
    for (const replica of Object.values(processes).flat()) {
      expect(replica.lines.filter((line) => Number(line.level) >= 50 || Number(line.status) >= 500)).toEqual([]);
    }
  }, 120_000);
});
