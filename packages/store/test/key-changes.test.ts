import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeyChangeHub, keyChangePayload, parseKeyChangePayload } from '../src/key-changes.js';
import { openMigratedStore, type StoreLocation } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import type { KeyChangeEvent, Store } from '../src/types.js';
import { createTestKey } from '../testing/keys.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../testing/postgres.js';
import { postgresAvailable } from '../testing/postgres-available.js';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from '../testing/private-postgres.js';

// In CI these throw when PostgreSQL is unreachable or its binaries are missing, so the tests are never skipped there.
const available = await postgresAvailable();
const privateAvailable = privatePostgresAvailable();

/** Records what a watcher hears, and waits for what it should. */
function recorder() {
  const heard: KeyChangeEvent[] = [];
  return {
    heard,
    listener: (event: KeyChangeEvent) => heard.push(event),
    async until(predicate: (events: KeyChangeEvent[]) => boolean, timeoutMs = 5_000): Promise<number> {
      const started = performance.now();
      while (!predicate(heard)) {
        if (performance.now() - started > timeoutMs) {
          throw new Error(`not heard within ${timeoutMs} ms; heard ${JSON.stringify(heard)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return performance.now() - started;
    },
  };
}

const changedIds = (events: KeyChangeEvent[]) =>
  events.flatMap((event) => (event.type === 'changed' ? [`${event.change.kind}:${event.change.id}`] : []));

async function newKey(store: Store, name = 'watched') {
  return (await createTestKey(store, DEFAULT_ORGANIZATION.id, { name })).apiKey;
}

describe('key change notification payloads', () => {
  it('carry the kind, the ID, the organization and the kind of change, and read back as sent', () => {
    const change = { kind: 'api_key', id: 'apikey_1', organizationId: 'org_1', change: 'rotated' } as const;

    expect(keyChangePayload(change, 'a1b2')).toBe('api_key:apikey_1:org_1:rotated:a1b2');
    expect(parseKeyChangePayload(keyChangePayload(change, 'a1b2'))).toEqual({ change, origin: 'a1b2' });
  });

  it("read an earlier release's payload as an update of no known organization", () => {
    expect(parseKeyChangePayload('verifier_key:vfykey_1')).toEqual({
      change: { kind: 'verifier_key', id: 'vfykey_1', organizationId: undefined, change: 'updated' },
      origin: undefined,
    });
  });

  it.each([
    '',
    'api_key',
    'api_key:',
    'token:apikey_1:org_1:updated',
    'api_key:apikey_1::updated',
    'api_key:apikey_1:org_1:deleted',
    'api_key:apikey_1:org_1:updated:',
    'api_key:apikey_1:org_1:updated:a1b2:extra',
  ])('refuse a payload of no form this service sends: %j', (payload) => {
    expect(parseKeyChangePayload(payload)).toBeUndefined();
  });
});

describe('the key change hub of a store', () => {
  /** A watch of other processes that records how often it started and stopped, and lets the test tell of events. */
  function fakeWatch(failures = 0) {
    const watch = { starts: 0, stops: 0, failures, tell: (_: KeyChangeEvent) => {} };
    const start = async (listener: (event: KeyChangeEvent) => void) => {
      watch.starts += 1;
      if (watch.failures > 0) {
        watch.failures -= 1;
        throw new Error('cannot listen');
      }
      watch.tell = listener;
      return async () => {
        watch.stops += 1;
      };
    };
    return { watch, start };
  }

  it('starts one watch for all its listeners, and stops it when the last one stops', async () => {
    const hub = new KeyChangeHub();
    const { watch, start } = fakeWatch();
    const order: string[] = [];
    const stops = await Promise.all(
      ['cache', 'feed'].map((name) => hub.listen((event) => order.push(`${name}:${event.type}`), start)),
    );

    watch.tell({ type: 'reset' });
    hub.publish({
      type: 'changed',
      change: { kind: 'api_key', id: 'apikey_1', organizationId: 'org_1', change: 'updated' },
    });
    await stops[0]?.();
    await stops[0]?.();
    expect(watch.stops).toBe(0);
    await stops[1]?.();

    expect(order).toEqual(['cache:reset', 'feed:reset', 'cache:changed', 'feed:changed']);
    expect(watch).toMatchObject({ starts: 1, stops: 1 });
  });

  it("tells every listener of an event though one of them throws, then throws that listener's error", async () => {
    const hub = new KeyChangeHub();
    const { start } = fakeWatch();
    const heard: string[] = [];
    await hub.listen(() => {
      throw new Error('a broken listener');
    }, start);
    await hub.listen((event) => heard.push(event.type), start);

    expect(() => hub.publish({ type: 'reset' })).toThrow('a broken listener');
    expect(heard).toEqual(['reset']);
  });

  it('tells a listener that comes while the watch is lost that it is, and one that comes after the reset nothing', async () => {
    const hub = new KeyChangeHub();
    const { watch, start } = fakeWatch();
    await hub.listen(() => {}, start);
    const late: string[] = [];
    const later: string[] = [];

    watch.tell({ type: 'lost' });
    await hub.listen((event) => late.push(event.type), start);
    watch.tell({ type: 'reset' });
    await hub.listen((event) => later.push(event.type), start);

    expect(late).toEqual(['lost', 'reset']);
    expect(later).toEqual([]);
  });

  it('rejects a listener, adding nothing, when the engine cannot watch; the next listener tries again', async () => {
    const hub = new KeyChangeHub();
    const { watch, start } = fakeWatch(1);
    const heard: string[] = [];

    await expect(hub.listen((event) => heard.push(`first:${event.type}`), start)).rejects.toThrow('cannot listen');
    await hub.listen((event) => heard.push(`second:${event.type}`), start);
    watch.tell({ type: 'reset' });

    expect(heard).toEqual(['second:reset']);
    expect(watch.starts).toBe(2);
  });
});

describe('watchKeyChanges on SQLite', () => {
  let dir: string;
  let location: StoreLocation;
  let store: Store;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'apikeys-key-changes-'));
    location = { kind: 'sqlite', path: join(dir, 'api-keys.sqlite') };
    ({ store } = await openMigratedStore(location));
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("hears the store's own changes as soon as each has committed: updates, rotations, admin and verifier keys", async () => {
    const { listener, heard } = recorder();
    const stop = await store.watchKeyChanges(listener);
    const key = await newKey(store);
    const admin = await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'ops' });
    const verifier = await store.createVerifierKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'gateway' });

    await store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { status: 'inactive' });
    const afterUpdate = changedIds(heard);
    await store.rotateApiKey({
      organizationId: DEFAULT_ORGANIZATION.id,
      id: key.id,
      gracePeriodMicros: 0,
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await store.setAdminKeyStatus(admin.adminKey.id, 'disabled');
    await store.setVerifierKeyStatus(verifier.verifierKey.id, 'disabled');
    await stop();
    await store.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'after the watcher stopped' });

    expect(afterUpdate).toEqual([`api_key:${key.id}`]);
    expect(
      heard.map((event) => (event.type === 'changed' ? [event.change.organizationId, event.change.change] : [])),
    ).toEqual([
      [DEFAULT_ORGANIZATION.id, 'updated'],
      [DEFAULT_ORGANIZATION.id, 'rotated'],
      [DEFAULT_ORGANIZATION.id, 'updated'],
      [DEFAULT_ORGANIZATION.id, 'updated'],
    ]);
    expect(changedIds(heard)).toEqual([
      `api_key:${key.id}`,
      `api_key:${key.id}`,
      `admin_key:${admin.adminKey.id}`,
      `verifier_key:${verifier.verifierKey.id}`,
    ]);
  });

  it('hears a change made in a transaction only once it commits, and none of one rolled back', async () => {
    const { listener, heard } = recorder();
    const stop = await store.watchKeyChanges(listener);
    const key = await newKey(store);
    let duringTransaction: string[] = [];

    await store.transaction(async (inside) => {
      await inside.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'committed' });
      duringTransaction = changedIds(heard);
    });
    await store
      .transaction(async (inside) => {
        await inside.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { name: 'rolled back' });
        throw new Error('roll back');
      })
      .catch(() => {});
    await stop();

    expect(duringTransaction).toEqual([]);
    expect(changedIds(heard)).toEqual([`api_key:${key.id}`]);
  });

  it('hears reset when another connection writes to the file (the operator CLI, another process)', async () => {
    const { listener, until } = recorder();
    const stop = await store.watchKeyChanges(listener);
    const other = new Database(location.kind === 'sqlite' ? location.path : '');
    try {
      other.prepare(`update verifier_keys set status = 'active'`).run();

      const waited = await until((events) => events.some((event) => event.type === 'reset'));

      expect(waited).toBeLessThan(1_000);
    } finally {
      other.close();
      await stop();
    }
  });
});

describe.runIf(available)('watchKeyChanges on PostgreSQL', () => {
  let database: TestDatabase;
  let stores: Store[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const location: StoreLocation = { kind: 'postgres', url: database.url };
    stores = [(await openMigratedStore(location)).store, (await openMigratedStore(location)).store];
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await database.drop();
  });

  it("hears another process's changes through notifications, within a second", async () => {
    const [writer, watcher] = stores as [Store, Store];
    const { listener, until } = recorder();
    const stop = await watcher.watchKeyChanges(listener);
    const key = await newKey(writer);
    const verifier = await writer.createVerifierKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'gateway' });

    await writer.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { status: 'archived' });
    const keyHeardIn = await until((events) => changedIds(events).includes(`api_key:${key.id}`));
    await writer.setVerifierKeyStatus(verifier.verifierKey.id, 'disabled');
    await until((events) => changedIds(events).includes(`verifier_key:${verifier.verifierKey.id}`));
    await stop();

    expect(keyHeardIn).toBeLessThan(1_000);
  });

  it("says whose key changed and how: another process's update and rotation, with the key's organization", async () => {
    const [writer, watcher] = stores as [Store, Store];
    const { listener, heard, until } = recorder();
    const stop = await watcher.watchKeyChanges(listener);
    const organization = await writer.createOrganization('Other');
    const key = (await createTestKey(writer, organization.id, { name: 'theirs' })).apiKey;

    await writer.updateApiKey(organization.id, key.id, { name: 'renamed' });
    await writer.rotateApiKey({
      organizationId: organization.id,
      id: key.id,
      gracePeriodMicros: 0,
      createdBy: { type: 'user', id: 'user_alice' },
    });
    await until((events) => changedIds(events).filter((id) => id === `api_key:${key.id}`).length === 2);
    await stop();

    const changes = heard.flatMap((event) => (event.type === 'changed' ? [event.change] : []));
    expect(changes.filter((change) => change.id === key.id)).toEqual([
      { kind: 'api_key', id: key.id, organizationId: organization.id, change: 'updated' },
      { kind: 'api_key', id: key.id, organizationId: organization.id, change: 'rotated' },
    ]);
  });

  it("hears another process's changes on one connection for all its listeners, each event in the order they came", async () => {
    const [writer, watcher] = stores as [Store, Store];
    const listeningConnections = () =>
      onPostgres(database.url, async (client) => {
        const { rows } = await client.query<{ count: string }>(
          `select count(*) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`,
        );
        return Number(rows[0]?.count);
      });
    const before = await listeningConnections();
    const order: string[] = [];
    const stops = await Promise.all(
      ['first', 'second', 'third'].map((name) =>
        watcher.watchKeyChanges((event) => {
          if (event.type === 'changed') {
            order.push(`${name}:${event.change.id}`);
          }
        }),
      ),
    );
    const { listener, until } = recorder();
    stops.push(await watcher.watchKeyChanges(listener));
    const keys = await Promise.all([newKey(writer, 'one'), newKey(writer, 'two')]);

    for (const key of keys) {
      await writer.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { status: 'inactive' });
    }
    await until((events) => keys.every((key) => changedIds(events).includes(`api_key:${key.id}`)));

    expect(await listeningConnections()).toBe(before + 1);
    const heard = order.filter((entry) => keys.some((key) => entry.endsWith(key.id)));
    expect(heard).toEqual(keys.flatMap((key) => ['first', 'second', 'third'].map((name) => `${name}:${key.id}`)));
    await Promise.all(stops.map((stop) => stop()));
    await expect.poll(listeningConnections).toBe(before);
  });

  it('tells the others of a change made just before the store closes (the operator CLI, which then exits)', async () => {
    const [, watcher] = stores as [Store, Store];
    const { listener, until } = recorder();
    const stop = await watcher.watchKeyChanges(listener);
    const { store: cli } = await openMigratedStore({ kind: 'postgres', url: database.url });
    const { adminKey } = await cli.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'operator' });

    await cli.setAdminKeyStatus(adminKey.id, 'disabled');
    await cli.close();

    await until((events) => changedIds(events).includes(`admin_key:${adminKey.id}`));
    await stop();
  });
});

describe.runIf(privateAvailable)('watchKeyChanges on a PostgreSQL server that restarts', () => {
  let server: PrivatePostgres;
  let stores: Store[] = [];

  beforeAll(async () => {
    server = await startPrivatePostgres();
  });
  afterEach(async () => {
    await Promise.all(stores.map((store) => store.close()));
    stores = [];
  });
  afterAll(() => server?.remove());

  it('says lost when the listening connection is lost, reset once it is back, and hears the changes made after', async () => {
    const location: StoreLocation = { kind: 'postgres', url: server.url };
    const writer = (await openMigratedStore(location, { timeoutMs: 1_000 })).store;
    const watcher = (await openMigratedStore(location, { timeoutMs: 1_000 })).store;
    stores = [writer, watcher];
    const { listener, heard, until } = recorder();
    const stop = await watcher.watchKeyChanges(listener);

    await server.stop();
    await until((events) => events.some((event) => event.type === 'lost'), 15_000);
    await server.start();
    await until((events) => events.some((event) => event.type === 'reset'), 15_000);
    const key = await newKey(writer, 'after the restart');
    await writer.updateApiKey(DEFAULT_ORGANIZATION.id, key.id, { status: 'inactive' });
    await until((events) => changedIds(events).includes(`api_key:${key.id}`));
    await stop();

    expect(heard.filter((event) => event.type !== 'changed').map((event) => event.type)).toEqual(['lost', 'reset']);
  });
});
