import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKey, ApiKeyList, operations } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import {
  API_KEYS_PATH,
  createTestKey,
  DEFAULT_ORGANIZATION,
  expectMatchesSpec,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
  VERSION_HEADER,
} from '@apikeys/server/testing';
import { openSqliteStore } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

type ListQuery = NonNullable<operations['listApiKeys']['parameters']['query']>;
type Filters = Pick<ListQuery, 'status' | 'workspace_id' | 'created_by_user_id'>;
type ListClient = TestServer['client'];

const ids = (keys: readonly ApiKey[]) => keys.map((key) => key.id);

/** The documented order, computed here rather than trusted to the store: created_at, then id, both descending. */
function newestFirst(keys: readonly ApiKey[]): ApiKey[] {
  const descending = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
  return [...keys].sort((a, b) => descending(a.created_at, b.created_at) || descending(a.id, b.id));
}

function matches(filters: Filters) {
  return (key: ApiKey) =>
    (filters.status === undefined || key.status === filters.status) &&
    (filters.workspace_id === undefined || key.workspace_id === filters.workspace_id) &&
    (filters.created_by_user_id === undefined ||
      (key.created_by.type === 'user' && key.created_by.id === filters.created_by_user_id));
}

/** Every key of an organization, read from the store, in the documented order. */
async function allKeysNewestFirst(server: TestServer, organizationId: string): Promise<ApiKey[]> {
  const everything = await server.store.listApiKeys({ organizationId, limit: 100_000 });
  if (everything.kind !== 'page') {
    throw new Error('a list without a cursor found no page');
  }
  return newestFirst(everything.keys.map(toApiKeyJson));
}

/** One page through the API; every response is checked against the spec. */
async function listPage(client: ListClient, query: ListQuery): Promise<ApiKeyList> {
  const { data, error, response } = await client.GET(API_KEYS_PATH, { params: { header: VERSION_HEADER, query } });
  expectMatchesSpec('listApiKeys', response, data ?? error);
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data ?? { data: [], has_more: false, first_id: null, last_id: null };
}

/** Asserts one page: exactly the expected keys, first_id and last_id, and has_more. */
function expectPage(page: ApiKeyList, expected: readonly string[], hasMore: boolean): void {
  expect(ids(page.data)).toEqual(expected);
  expect(page.first_id).toBe(expected[0] ?? null);
  expect(page.last_id).toBe(expected.at(-1) ?? null);
  expect(page.has_more).toBe(hasMore);
}

/**
 * Walks from the newest key via `after_id = last_id` until has_more is false, checking every page against the
 * expected order. Returns the IDs seen, in order.
 */
async function walkForwards(client: ListClient, expected: readonly string[], filters: Filters, limit: number) {
  const seen: string[] = [];
  let afterId: string | undefined;
  for (let pages = 0; pages <= expected.length; pages++) {
    const page = await listPage(client, { ...filters, limit, ...(afterId === undefined ? {} : { after_id: afterId }) });
    const start = seen.length;
    expectPage(page, expected.slice(start, start + limit), start + limit < expected.length);
    seen.push(...ids(page.data));
    if (!page.has_more || page.last_id === null) {
      return seen;
    }
    afterId = page.last_id;
  }
  throw new Error(`walking forwards at limit ${limit} did not end`);
}

/**
 * Walks from the oldest expected key via `before_id = first_id` until has_more is false, checking every page.
 * Returns the IDs seen, the starting key included, in list order.
 */
async function walkBackwards(client: ListClient, expected: readonly string[], filters: Filters, limit: number) {
  const oldest = expected.at(-1);
  if (oldest === undefined) {
    throw new Error('walkBackwards needs at least one expected key');
  }
  const seen: string[] = [oldest];
  let beforeId = oldest;
  for (let pages = 0; pages <= expected.length; pages++) {
    const page = await listPage(client, { ...filters, limit, before_id: beforeId });
    const end = expected.length - seen.length;
    expectPage(page, expected.slice(Math.max(0, end - limit), end), end - limit > 0);
    seen.unshift(...ids(page.data));
    if (!page.has_more || page.first_id === null) {
      return seen;
    }
    beforeId = page.first_id;
  }
  throw new Error(`walking backwards at limit ${limit} did not end`);
}

/** Walks both ways and asserts that each walk visits every matching key exactly once, in order. */
async function expectCompleteWalks(client: ListClient, all: readonly ApiKey[], filters: Filters, limit: number) {
  const expected = ids(all.filter(matches(filters)));
  expect(expected.length, 'the filter must match some keys for the walk to mean anything').toBeGreaterThan(0);

  const forwards = await walkForwards(client, expected, filters, limit);
  const backwards = await walkBackwards(client, expected, filters, limit);

  expect(forwards).toEqual(expected);
  expect(new Set(forwards).size).toBe(expected.length);
  expect(backwards).toEqual(expected);
  expect(new Set(backwards).size).toBe(expected.length);
}

const FILTERS: [string, Filters][] = [
  ['no filter', {}],
  ['status', { status: 'active' }],
  ['workspace_id', { workspace_id: 'wrkspc_seed1' }],
  ['created_by_user_id', { created_by_user_id: 'user_seed2' }],
  [
    'status, workspace_id and created_by_user_id',
    { status: 'inactive', workspace_id: 'wrkspc_seed0', created_by_user_id: 'user_seed3' },
  ],
];
const COMBINED: Filters = { status: 'inactive', workspace_id: 'wrkspc_seed0', created_by_user_id: 'user_seed3' };

describe('listApiKeys pagination over 3000 keys', () => {
  let server: TestServer;
  /** Every key of org_default, newest first. */
  let all: ApiKey[];
  let allIds: string[];
  /** A small organization of 120 keys for walks at limit 1. */
  let small: TestOrganizationWithClient;
  let smallKeys: ApiKey[];

  beforeAll(async () => {
    server = await startTestServer();
    await seedApiKeys(server.store, {
      organizationId: DEFAULT_ORGANIZATION.id,
      count: 3000,
      workspaces: 3,
      users: 4,
      seed: 7,
    });
    all = await allKeysNewestFirst(server, DEFAULT_ORGANIZATION.id);
    allIds = ids(all);
    small = await server.createOrganization('small');
    await seedApiKeys(server.store, { organizationId: small.id, count: 120, workspaces: 2, users: 2, seed: 11 });
    smallKeys = await allKeysNewestFirst(server, small.id);
  });
  afterAll(() => server.close());

  it('seeds the keys the walks rely on', () => {
    expect(all).toHaveLength(3000);
    expect(smallKeys).toHaveLength(120);
    expect(all.filter(matches(COMBINED)).length).toBeGreaterThan(20);
  });

  describe.each([7, 100, 1000])('at limit %i', (limit) => {
    it.each(FILTERS)('walks forwards and backwards over every key, %s', async (_label, filters) => {
      await expectCompleteWalks(server.client, all, filters, limit);
    });
  });

  describe('at limit 1', () => {
    it('walks forwards and backwards over a small organization, no filter', async () => {
      await expectCompleteWalks(small.client, smallKeys, {}, 1);
    });

    it('walks forwards and backwards over a small organization, filtered by status', async () => {
      await expectCompleteWalks(small.client, smallKeys, { status: 'archived' }, 1);
    });

    it('walks forwards and backwards over the keys matching all three filters', async () => {
      await expectCompleteWalks(server.client, all, COMBINED, 1);
    });
  });

  describe('boundaries', () => {
    it('answers a filter that matches nothing with an empty page', async () => {
      const page = await listPage(server.client, { workspace_id: 'wrkspc_nobody', limit: 1000 });

      expect(page).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    });

    it('answers a filter that matches nothing with an empty page, from either cursor', async () => {
      const middle = allIds[1500] ?? '';

      const after = await listPage(server.client, { created_by_user_id: 'user_nobody', after_id: middle });
      const before = await listPage(server.client, { created_by_user_id: 'user_nobody', before_id: middle });

      expect(after).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
      expect(before).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    });

    it('answers an empty page after the oldest key and before the newest', async () => {
      const afterOldest = await listPage(server.client, { after_id: allIds.at(-1) ?? '' });
      const beforeNewest = await listPage(server.client, { before_id: allIds[0] ?? '' });

      expectPage(afterOldest, [], false);
      expectPage(beforeNewest, [], false);
    });

    it('says has_more false on a last page that is exactly full, and true one key earlier', async () => {
      const n = allIds.length;

      const exactlyFull = await listPage(server.client, { limit: 7, after_id: allIds[n - 8] ?? '' });
      const oneMore = await listPage(server.client, { limit: 7, after_id: allIds[n - 9] ?? '' });

      expectPage(exactlyFull, allIds.slice(n - 7), false);
      expectPage(oneMore, allIds.slice(n - 8, n - 1), true);
    });

    it('says has_more false on a first page backwards that is exactly full, and true one key later', async () => {
      const exactlyFull = await listPage(server.client, { limit: 7, before_id: allIds[7] ?? '' });
      const oneMore = await listPage(server.client, { limit: 7, before_id: allIds[8] ?? '' });

      expectPage(exactlyFull, allIds.slice(0, 7), false);
      expectPage(oneMore, allIds.slice(1, 8), true);
    });

    it('returns the limit keys immediately preceding before_id, newest first', async () => {
      const page = await listPage(server.client, { limit: 7, before_id: allIds[500] ?? '' });

      expectPage(page, allIds.slice(493, 500), true);
    });

    it('returns one key at limit 1 and a thousand at limit 1000', async () => {
      const one = await listPage(server.client, { limit: 1 });
      const thousand = await listPage(server.client, { limit: 1000 });
      const lastThousand = await listPage(server.client, { limit: 1000, after_id: allIds[1999] ?? '' });

      expectPage(one, allIds.slice(0, 1), true);
      expectPage(thousand, allIds.slice(0, 1000), true);
      expectPage(lastThousand, allIds.slice(2000), false);
    });

    it('positions a cursor by a key that does not match the filters', async () => {
      const cursorIndex = all.findIndex((key, index) => index > 1000 && !matches(COMBINED)(key));
      const cursor = all[cursorIndex];
      if (cursor === undefined) {
        throw new Error('no key outside the filter');
      }
      const older = ids(all.slice(cursorIndex + 1).filter(matches(COMBINED)));
      const newer = ids(all.slice(0, cursorIndex).filter(matches(COMBINED)));

      const after = await listPage(server.client, { ...COMBINED, limit: 5, after_id: cursor.id });
      const before = await listPage(server.client, { ...COMBINED, limit: 5, before_id: cursor.id });

      expectPage(after, older.slice(0, 5), older.length > 5);
      expectPage(before, newer.slice(-5), newer.length > 5);
    });

    it('answers an empty page after a non-matching cursor older than every matching key', async () => {
      const matching = all.filter(matches(COMBINED));
      const oldestMatch = allIds.indexOf(matching.at(-1)?.id ?? '');
      const olderKey = all.slice(oldestMatch + 1).find((key) => !matches(COMBINED)(key));
      if (olderKey === undefined) {
        throw new Error('no non-matching key older than every matching key');
      }

      const page = await listPage(server.client, { ...COMBINED, after_id: olderKey.id });
      const back = await listPage(server.client, { ...COMBINED, limit: 3, before_id: olderKey.id });

      expectPage(page, [], false);
      expectPage(back, ids(matching.slice(-3)), true);
    });
  });
});

describe('listApiKeys pagination over keys created in the same microsecond', () => {
  let directory: string;
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let all: ApiKey[];

  /**
   * Creates keys that share one `created_at`. The store keeps its clock strictly increasing within a module
   * instance, so each key is created through a fresh instance of the store module, on the same database file,
   * with the clock frozen.
   */
  async function createTiedKeys(databasePath: string, organizationId: string, count: number): Promise<void> {
    vi.useFakeTimers({ toFake: ['Date', 'hrtime'], now: new Date('2024-05-01T12:00:00.123Z') });
    try {
      for (let i = 0; i < count; i++) {
        vi.resetModules();
        const fresh = await import('@apikeys/store');
        const { store } = fresh.openSqliteStore(databasePath);
        await store.createApiKey({ organizationId, name: `tied ${i}`, createdBy: { id: 'user_tie', type: 'user' } });
        await store.close();
      }
    } finally {
      vi.useRealTimers();
    }
  }

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'apikeys-ties-'));
    const databasePath = join(directory, 'ties.sqlite');
    server = await startTestServer({ opened: openSqliteStore(databasePath) });
    org = await server.createOrganization('ties');
    await createTiedKeys(databasePath, org.id, 8);
    await createTestKey(server.store, org.id, { name: 'newer than the ties' });
    all = await allKeysNewestFirst(server, org.id);
  });
  afterAll(async () => {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('has eight keys with the same created_at', () => {
    const tied = all.filter((key) => key.created_at === '2024-05-01T12:00:00.123000Z');

    expect(tied).toHaveLength(8);
  });

  it('orders tied keys by id, descending', async () => {
    const page = await listPage(org.client, {});

    expectPage(page, ids(all), false);
  });

  it.each([1, 2, 3])('walks forwards and backwards through the ties at limit %i', async (limit) => {
    await expectCompleteWalks(org.client, all, {}, limit);
  });
});
