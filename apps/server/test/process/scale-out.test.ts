import type { ApiKey, ApiKeyList, ApiKeyStatus } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import {
  API_VERSION,
  createTestDatabase,
  DEFAULT_ORGANIZATION,
  migrationNames,
  postgresAvailable,
  type StartedServerProcess,
  startServerProcess,
  type TestDatabase,
} from '@apikeys/server/testing';
import { nowMicros, type OpenedStore, openStore } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ORGANIZATION = DEFAULT_ORGANIZATION.id;
const LIST = '/v1/organizations/api_keys';
const SEEDED_KEYS = 1000;
/** A page size that does not divide the number of keys, so the last page is a partial one. */
const PAGE_SIZE = 37;
const STATUSES: readonly ApiKeyStatus[] = ['active', 'inactive', 'archived'];

type Replica = StartedServerProcess;

interface Reply<T> {
  status: number;
  body: T;
}

describe.runIf(await postgresAvailable())('two server processes on one PostgreSQL database', () => {
  let database: TestDatabase | undefined;
  let opened: OpenedStore | undefined;
  const replicas: Replica[] = [];
  let adminKey = '';

  const a = () => replicas[0] as Replica;
  const b = () => replicas[1] as Replica;
  /** Replica A for even numbers, B for odd ones. */
  const alternate = (n: number) => (n % 2 === 0 ? a() : b());
  const theStore = () => (opened as OpenedStore).store;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Both start at the same moment on the empty database, so both run the migrations concurrently.
    const env = { DATABASE_URL: database.url, DATABASE_POOL_SIZE: '8' };
    const started = await Promise.allSettled([startServerProcess({ env }), startServerProcess({ env })]);
    for (const result of started) {
      if (result.status === 'fulfilled') {
        replicas.push(result.value);
      }
    }
    for (const result of started) {
      if (result.status === 'rejected') {
        throw result.reason;
      }
    }

    opened = await openStore({ kind: 'postgres', url: database.url }, { poolSize: 4 });
    adminKey = (await theStore().createAdminKey({ organizationId: ORGANIZATION, name: 'scale-out admin' })).secret;
    await seedApiKeys(theStore(), {
      organizationId: ORGANIZATION,
      count: SEEDED_KEYS,
      workspaces: 3,
      users: 5,
      seed: 4,
    });
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.kill()));
    await opened?.store.close();
    await database?.drop();
  });

  async function call<T>(replica: Replica, method: 'GET' | 'POST', path: string, body?: object): Promise<Reply<T>> {
    const response = await fetch(`${replica.baseUrl}${path}`, {
      method,
      headers: {
        'x-api-key': adminKey,
        'vendor-version': API_VERSION,
        ...(body && { 'content-type': 'application/json' }),
      },
      ...(body && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as T };
  }

  const getKey = (replica: Replica, id: string) => call<ApiKey>(replica, 'GET', `${LIST}/${id}`);
  const updateKey = (replica: Replica, id: string, patch: { name?: string; status?: ApiKeyStatus }) =>
    call<ApiKey>(replica, 'POST', `${LIST}/${id}`, patch);
  const listKeys = (replica: Replica, query: Record<string, string | number>) => {
    const search = new URLSearchParams(
      Object.entries(query).map(([name, value]): [string, string] => [name, `${value}`]),
    );
    return call<ApiKeyList>(replica, 'GET', `${LIST}?${search}`);
  };

  /** Every key of the organization, newest first, read straight from the database. */
  async function storedKeys(): Promise<ApiKey[]> {
    const page = await theStore().listApiKeys({ organizationId: ORGANIZATION, limit: 100_000 });
    return page.kind === 'page' ? page.keys.map(toApiKeyJson) : [];
  }

  /** Checks what every page must satisfy, whichever way it was walked. */
  function expectWellFormedPage(reply: Reply<ApiKeyList>, limit: number) {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const { data, has_more, first_id, last_id } = reply.body;
    expect(data.length).toBeLessThanOrEqual(limit);
    if (has_more) {
      expect(data).toHaveLength(limit);
    }
    expect(first_id).toBe(data[0]?.id ?? null);
    expect(last_id).toBe(data.at(-1)?.id ?? null);
  }

  /** Walks forwards from the newest key with `after_id = last_id`; page n is read through `replicaFor(n)`. */
  async function walkForwards(replicaFor: (page: number) => Replica, limit = PAGE_SIZE): Promise<ApiKey[]> {
    const keys: ApiKey[] = [];
    let afterId: string | null = null;
    for (let page = 0; page <= SEEDED_KEYS; page++) {
      const reply: Reply<ApiKeyList> = await listKeys(replicaFor(page), {
        limit,
        ...(afterId && { after_id: afterId }),
      });
      expectWellFormedPage(reply, limit);
      keys.push(...reply.body.data);
      if (!reply.body.has_more) {
        return keys;
      }
      afterId = reply.body.last_id;
    }
    throw new Error('the forward walk does not end');
  }

  /** Walks backwards (towards the newest key) from `beforeId` with `before_id = first_id`. */
  async function walkBackwards(beforeId: string, replicaFor: (page: number) => Replica): Promise<ApiKey[]> {
    const pages: ApiKey[][] = [];
    let cursor: string | null = beforeId;
    for (let page = 0; cursor !== null && page <= SEEDED_KEYS; page++) {
      const reply: Reply<ApiKeyList> = await listKeys(replicaFor(page), { limit: PAGE_SIZE, before_id: cursor });
      expectWellFormedPage(reply, PAGE_SIZE);
      pages.unshift(reply.body.data);
      if (!reply.body.has_more) {
        return pages.flat();
      }
      cursor = reply.body.first_id;
    }
    throw new Error('the backward walk does not end');
  }

  const ids = (keys: readonly ApiKey[]) => keys.map((key) => key.id);
  const namesById = (keys: readonly ApiKey[]) => new Map(keys.map((key) => [key.id, key.name]));

  it('starts two servers at once on a fresh database: exactly one applies the migrations, both serve', async () => {
    const applied = replicas.map(
      (replica) => replica.lines.find((line) => line.msg === 'store ready')?.migrations_applied,
    );

    expect(new Set(replicas.map((replica) => replica.baseUrl)).size).toBe(2);
    expect(applied).toHaveLength(2);
    expect(applied).toEqual(expect.arrayContaining([[], await migrationNames()]));
    expect(await (opened as OpenedStore).migrator.migrateToLatest()).toEqual([]);
    for (const replica of replicas) {
      const reply = await listKeys(replica, { limit: 1 });
      expect(reply.status).toBe(200);
      expect(reply.body.has_more).toBe(true);
    }
  });

  it('shows an update made through one replica at once through the other: get, and list filtered by status', async () => {
    // The newest key, so that it heads every filtered list it belongs to.
    const { apiKey } = await theStore().createApiKey({
      organizationId: ORGANIZATION,
      name: 'replicated',
      createdBy: { id: 'user_scale_out', type: 'user' },
    });

    for (let round = 0; round < 12; round++) {
      const [writer, reader] = round % 2 === 0 ? [a(), b()] : [b(), a()];
      const status = STATUSES[round % STATUSES.length] as ApiKeyStatus;
      const name = `replicated ${round}`;

      const updated = await updateKey(writer, apiKey.id, { name, status });
      const read = await getKey(reader, apiKey.id);
      const withStatus = await listKeys(reader, { limit: 1, status });
      const others = await Promise.all(
        STATUSES.filter((other) => other !== status).map((other) => listKeys(reader, { limit: 1, status: other })),
      );

      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id: apiKey.id, name, status });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(updated.body);
      expect(withStatus.status).toBe(200);
      expect(withStatus.body.data).toEqual([updated.body]);
      for (const other of others) {
        expect(other.status).toBe(200);
        expect(other.body.first_id).not.toBe(apiKey.id);
      }
    }
  });

  it('loses none of 200 concurrent updates of distinct keys spread over both replicas', async () => {
    const before = await storedKeys();
    // Every fifth key, so the updated rows are spread over the whole table.
    const targets = before.filter((_, index) => index % 5 === 0).slice(0, 200);
    expect(targets).toHaveLength(200);

    const replies = await Promise.all(
      targets.map((key, i) => updateKey(alternate(i), key.id, { name: `renamed ${i}` })),
    );
    const readBack = await Promise.all(targets.map((key, i) => getKey(alternate(i + 1), key.id)));

    const expected = namesById(before);
    targets.forEach((key, i) => {
      expected.set(key.id, `renamed ${i}`);
    });
    replies.forEach((reply, i) => {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({ id: targets[i]?.id, name: `renamed ${i}`, status: targets[i]?.status });
    });
    readBack.forEach((reply, i) => {
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(replies[i]?.body);
    });
    for (const replica of [a(), b()]) {
      expect(namesById(await walkForwards(() => replica, 1000))).toEqual(expected);
    }
    expect(namesById(await storedKeys())).toEqual(expected);
  });

  it('acknowledges 100 concurrent updates of one key over both replicas and keeps one of them (last writer wins)', async () => {
    const before = await storedKeys();
    const hot = before[Math.floor(before.length / 2)] as ApiKey;
    const names = Array.from({ length: 100 }, (_, i) => `hot ${i}`);

    const replies = await Promise.all(names.map((name, i) => updateKey(alternate(i), hot.id, { name })));
    const [throughA, throughB] = await Promise.all([getKey(a(), hot.id), getKey(b(), hot.id)]);
    const record = await theStore().getApiKey(ORGANIZATION, hot.id);
    const stored = record && toApiKeyJson(record, nowMicros());

    replies.forEach((reply, i) => {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      // Each update returns the row as that update wrote it.
      expect(reply.body).toEqual({ ...hot, name: names[i] });
    });
    expect(names).toContain(stored?.name);
    expect(stored).toEqual({ ...hot, name: stored?.name });
    expect(throughA.body).toEqual(stored);
    expect(throughB.body).toEqual(stored);
    // Nothing else changed.
    const after = await storedKeys();
    expect(ids(after)).toEqual(ids(before));
    expect(after.filter((key) => key.id !== hot.id)).toEqual(before.filter((key) => key.id !== hot.id));
  });

  it('returns every key exactly once to walks that alternate replicas page by page, forwards and backwards', async () => {
    const expected = ids(await storedKeys());
    const oldest = expected.at(-1) as string;
    expect(expected.length).toBeGreaterThan(SEEDED_KEYS);

    const forwards = await walkForwards(alternate);
    const backwards = await walkBackwards(oldest, alternate);

    expect(ids(forwards)).toEqual(expected);
    expect(ids(backwards)).toEqual(expected.slice(0, -1));
  });

  it('returns every key exactly once to walks while the other replica keeps changing names and statuses', async () => {
    const expected = ids(await storedKeys());
    const oldest = expected.at(-1) as string;
    let walking = true;
    const acknowledged: number[] = [];
    /** Updates keys one after another through `replica` until the walks are done. */
    const churn = async (replica: Replica, worker: number) => {
      for (let n = 0; walking; n++) {
        const id = expected[(worker * 131 + n * 17) % expected.length] as string;
        const status = STATUSES[(worker + n) % STATUSES.length] as ApiKeyStatus;
        const reply = await updateKey(replica, id, { name: `churn ${worker}.${n}`, status });
        acknowledged.push(reply.status);
      }
    };

    // Forwards through A while B writes; backwards through B while A writes.
    const churners = [0, 1, 2, 3].map((worker) => churn(worker % 2 === 0 ? b() : a(), worker));
    const walks = Promise.all([walkForwards(a), walkBackwards(oldest, b)]);
    const [forwards, backwards] = await walks.finally(() => {
      walking = false;
    });
    const updatesDuringWalks = acknowledged.length;
    await Promise.all(churners);

    expect(updatesDuringWalks).toBeGreaterThan(10);
    expect(acknowledged.every((status) => status === 200)).toBe(true);
    expect(ids(forwards)).toEqual(expected);
    expect(ids(backwards)).toEqual(expected.slice(0, -1));
    // Only names and statuses changed.
    expect(ids(await storedKeys())).toEqual(expected);
  });

  it('stops both replicas gracefully on SIGTERM, having logged no error and answered no request with a 5xx', async () => {
    const exits = await Promise.all(replicas.map((replica) => replica.stop()));

    for (const [index, replica] of replicas.entries()) {
      const context = `replica ${index}: ${replica.stderr()}`;
      expect(exits[index], context).toEqual({ code: 0, signal: null });
      expect(replica.lines.map((line) => line.msg).slice(-2), context).toEqual(['shutting down', 'stopped']);
      expect(
        replica.lines.filter((line) => Number(line.level) >= 50 || Number(line.status) >= 500),
        context,
      ).toEqual([]);
      expect(replica.stderr(), context).toBe('');
    }
  });
});
