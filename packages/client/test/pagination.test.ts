import { API_VERSION, seedApiKeys, startTestServer, type TestServer } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ApiKey,
  type ApiKeyPage,
  createAdminClient,
  type ListApiKeysQuery,
  neighbourQueries,
  type PagePosition,
  PaginationError,
} from '../src/index.js';
import { observedFetch } from './support/observed-fetch.js';
import { startScriptedServer } from './support/scripted-server.js';

const KEY_COUNT = 500;
const LIMIT = 7;

let server: TestServer;
let adminKey: string;
/** Every key of the organization, newest first, as one page of the API returns them. */
let all: ApiKey[];

function clientWithLog() {
  const { fetch, sent } = observedFetch();
  const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: adminKey, fetch });
  return { client, sent };
}

/** The keys matching `query`, in one request: the reference the page walks are checked against. */
async function everyKey(query: ListApiKeysQuery = {}): Promise<ApiKey[]> {
  const page = await createAdminClient({ baseUrl: server.baseUrl, apiKey: adminKey }).apiKeys.list({
    ...query,
    limit: 1000,
  });
  expect(page.hasMore).toBe(false);
  return page.data;
}

async function collect(keys: AsyncIterable<ApiKey>): Promise<ApiKey[]> {
  const collected: ApiKey[] = [];
  for await (const key of keys) {
    collected.push(key);
  }
  return collected;
}

function ids(keys: readonly ApiKey[]): string[] {
  return keys.map((key) => key.id);
}

beforeAll(async () => {
  server = await startTestServer();
  const organization = await server.createOrganization('pagination');
  adminKey = organization.adminKey;
  await seedApiKeys(server.store, {
    organizationId: organization.id,
    count: KEY_COUNT,
    workspaces: 3,
    users: 4,
    seed: 7,
  });
  all = await everyKey();
  expect(all).toHaveLength(KEY_COUNT);
});

afterAll(async () => {
  await server?.close();
});

describe('apiKeys.listAll forwards', () => {
  it('yields every key once, newest first, following after_id = last_id page after page', async () => {
    const { client, sent } = clientWithLog();

    const keys = await collect(client.apiKeys.listAll({ limit: LIMIT }));

    expect(ids(keys)).toEqual(ids(all));
    expect(sent).toHaveLength(Math.ceil(KEY_COUNT / LIMIT));
    expect(sent[0]?.url.searchParams.has('after_id')).toBe(false);
    for (const [index, request] of sent.entries()) {
      expect(request.url.searchParams.get('limit')).toBe(String(LIMIT));
      expect(request.url.searchParams.has('before_id')).toBe(false);
      if (index > 0) {
        expect(request.url.searchParams.get('after_id')).toBe(all[index * LIMIT - 1]?.id);
      }
    }
  });

  it('starts after the given after_id', async () => {
    const start = 123;
    const { client } = clientWithLog();

    const keys = await collect(client.apiKeys.listAll({ limit: LIMIT, after_id: all[start]?.id ?? '' }));

    expect(ids(keys)).toEqual(ids(all.slice(start + 1)));
  });

  it('re-sends the filters on every page and yields exactly the matching keys', async () => {
    const filters = { status: 'active', workspace_id: 'wrkspc_seed1' } as const;
    const expected = await everyKey(filters);
    expect(expected.length).toBeGreaterThan(3 * LIMIT);
    const { client, sent } = clientWithLog();

    const keys = await collect(client.apiKeys.listAll({ ...filters, limit: LIMIT }));

    expect(ids(keys)).toEqual(ids(expected));
    expect(sent).toHaveLength(Math.ceil(expected.length / LIMIT));
    for (const request of sent) {
      expect(request.url.searchParams.get('status')).toBe('active');
      expect(request.url.searchParams.get('workspace_id')).toBe('wrkspc_seed1');
    }
  });

  it('stops fetching when the caller stops iterating', async () => {
    const { client, sent } = clientWithLog();

    const keys: ApiKey[] = [];
    for await (const key of client.apiKeys.listAll({ limit: LIMIT })) {
      keys.push(key);
      if (keys.length === LIMIT + 1) {
        break;
      }
    }

    expect(ids(keys)).toEqual(ids(all.slice(0, LIMIT + 1)));
    expect(sent).toHaveLength(2);
  });
});

describe('apiKeys.listAll backwards', () => {
  it('walks from before_id towards newer keys with before_id = first_id, yielding keys oldest first', async () => {
    const oldest = all[KEY_COUNT - 1]?.id ?? '';
    const { client, sent } = clientWithLog();

    const keys = await collect(client.apiKeys.listAll({ limit: LIMIT, before_id: oldest }));

    // Keys come in the order of travel: from the cursor towards the newest, one consistent order across pages.
    const pages: string[][] = [];
    for (let end = KEY_COUNT - 1; end > 0; end -= LIMIT) {
      pages.push(ids(all.slice(Math.max(0, end - LIMIT), end)));
    }
    expect(ids(keys)).toEqual(ids(all.slice(0, KEY_COUNT - 1)).reverse());
    expect(new Set(ids(keys))).toEqual(new Set(ids(all.slice(0, KEY_COUNT - 1))));
    expect(sent).toHaveLength(Math.ceil((KEY_COUNT - 1) / LIMIT));
    for (const [index, request] of sent.entries()) {
      expect(request.url.searchParams.has('after_id')).toBe(false);
      expect(request.url.searchParams.get('before_id')).toBe(index === 0 ? oldest : pages[index - 1]?.[0]);
    }
  });

  it('re-sends the filters on every page going backwards', async () => {
    const filters = { created_by_user_id: 'user_seed2', status: 'inactive' } as const;
    const expected = await everyKey(filters);
    const { client, sent } = clientWithLog();

    const keys = await collect(client.apiKeys.listAll({ ...filters, limit: LIMIT, before_id: all[KEY_COUNT - 1]?.id }));

    expect(new Set(ids(keys))).toEqual(new Set(ids(expected).filter((id) => id !== all[KEY_COUNT - 1]?.id)));
    expect(sent.length).toBeGreaterThan(3);
    for (const request of sent) {
      expect(request.url.searchParams.get('created_by_user_id')).toBe('user_seed2');
      expect(request.url.searchParams.get('status')).toBe('inactive');
    }
  });
});

describe('ApiKeyPage', () => {
  it('pages forwards with nextPage() to the end, then back with previousPage() to the start', async () => {
    const { client } = clientWithLog();
    const forwards: ApiKeyPage[] = [];

    let page: ApiKeyPage | null = await client.apiKeys.list({ limit: LIMIT });
    while (page) {
      forwards.push(page);
      page = await page.nextPage();
    }
    const last = forwards.at(-1) as ApiKeyPage;
    const backwards: ApiKeyPage[] = [];
    page = await last.previousPage();
    while (page) {
      backwards.push(page);
      page = await page.previousPage();
    }

    expect(forwards.flatMap((each) => ids(each.data))).toEqual(ids(all));
    expect(last.hasMore).toBe(false);
    expect(await forwards[0]?.previousPage()).toBeNull();
    expect(backwards.map((each) => ids(each.data))).toEqual(
      forwards
        .slice(0, -1)
        .map((each) => ids(each.data))
        .reverse(),
    );
    expect(backwards.at(-1)?.hasMore).toBe(false);
    expect(backwards.every((each) => each.direction === 'before')).toBe(true);
  });

  it('keeps the filters and limit in the query of every neighbour, with a single cursor', async () => {
    const { client } = clientWithLog();
    const first = await client.apiKeys.list({ limit: LIMIT, status: 'archived' });

    const second = await first.nextPage();
    const back = await second?.previousPage();

    expect(second?.query).toEqual({ limit: LIMIT, status: 'archived', after_id: first.last_id });
    expect(back?.query).toEqual({ limit: LIMIT, status: 'archived', before_id: second?.first_id });
    expect(back?.data).toEqual(first.data);
    expect([...(second?.data ?? []), ...first.data].every((key) => key.status === 'archived')).toBe(true);
  });

  it('goes older from a page fetched backwards, and newer from a page fetched forwards', async () => {
    const { client } = clientWithLog();
    const middle = all[250]?.id ?? '';

    const newer = await client.apiKeys.list({ limit: LIMIT, before_id: middle });
    const older = await client.apiKeys.list({ limit: LIMIT, after_id: middle });

    expect(ids((await newer.nextPage())?.data ?? [])).toEqual(ids(all.slice(250, 250 + LIMIT)));
    expect(ids((await older.previousPage())?.data ?? [])).toEqual(ids(all.slice(250 - LIMIT + 1, 251)));
  });

  it('iterates with for await from any page onwards, in its direction', async () => {
    const { client } = clientWithLog();
    const page = await client.apiKeys.list({ limit: LIMIT, after_id: all[400]?.id ?? '' });

    const keys = await collect(page);

    expect(ids(keys)).toEqual(ids(all.slice(401)));
  });
});

describe('neighbourQueries', () => {
  const page = { first_id: 'apikey_first', last_id: 'apikey_last' };
  // Typed as the keys list's pages, whose queries have filters besides the cursors.
  const neighbours = (position: PagePosition<ListApiKeysQuery>) => neighbourQueries(position);

  it('the newest page: only older keys, when there are more', () => {
    expect(neighbours({ ...page, query: { status: 'active' }, has_more: true })).toEqual({
      previous: null,
      next: { status: 'active', after_id: 'apikey_last' },
    });
    expect(neighbours({ ...page, query: {}, has_more: false })).toEqual({ previous: null, next: null });
  });

  it('a page reached forwards: newer keys before it, older ones after it while has_more says so', () => {
    expect(neighbours({ ...page, query: { after_id: 'apikey_x', limit: 5 }, has_more: false })).toEqual({
      previous: { limit: 5, before_id: 'apikey_first' },
      next: null,
    });
  });

  it('a page reached backwards: has_more tells of newer keys; older ones follow, where it came from', () => {
    expect(neighbours({ ...page, query: { before_id: 'apikey_x', limit: 50 }, has_more: false })).toEqual({
      previous: null,
      next: { limit: 50, after_id: 'apikey_last' },
    });
    expect(neighbours({ ...page, query: { before_id: 'apikey_x' }, has_more: true }).previous).toEqual({
      before_id: 'apikey_first',
    });
  });

  it('an empty page has no neighbours, whatever has_more says', () => {
    for (const has_more of [true, false]) {
      expect(neighbours({ first_id: null, last_id: null, query: { after_id: 'apikey_x' }, has_more })).toEqual({
        previous: null,
        next: null,
      });
    }
  });

  it('agrees with what nextPage() and previousPage() fetch', async () => {
    const { client, sent } = clientWithLog();
    const first = await client.apiKeys.list({ limit: LIMIT, status: 'active' });
    const second = await first.nextPage();

    expect(neighbourQueries(first).next).toEqual(second?.query);
    expect(sent.at(-1)?.url.searchParams.get('after_id')).toBe(first.last_id);
    expect(neighbourQueries(second as ApiKeyPage).previous).toEqual({
      limit: LIMIT,
      status: 'active',
      before_id: second?.first_id,
    });
  });
});

describe('a client of 2023-06-01', () => {
  function oldClientWithLog() {
    const { fetch, sent } = observedFetch();
    const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: adminKey, apiVersion: API_VERSION, fetch });
    return { client, sent };
  }

  it('walks every key with listAll, in the same order as the latest version, re-sending its filters', async () => {
    const { client, sent } = oldClientWithLog();

    const keys: ApiKey<typeof API_VERSION>[] = [];
    for await (const key of client.apiKeys.listAll({ limit: LIMIT, workspace_id: 'wrkspc_seed1' })) {
      keys.push(key);
    }

    const expected = await everyKey({ workspace_id: 'wrkspc_seed1' });
    expect(keys.map((key) => key.id)).toEqual(ids(expected));
    expect(keys.every((key) => key.workspace_id === 'wrkspc_seed1')).toBe(true);
    expect(sent).toHaveLength(Math.ceil(expected.length / LIMIT));
    for (const request of sent) {
      expect(request.headers.get('vendor-version')).toBe(API_VERSION);
      expect(request.url.searchParams.get('workspace_id')).toBe('wrkspc_seed1');
    }
  });

  it('pages with nextPage() and previousPage(), its pages typed with its own key shape', async () => {
    const { client } = oldClientWithLog();

    const first = await client.apiKeys.list({ limit: LIMIT });
    const second = await first.nextPage();
    const back = await second?.previousPage();

    expect(second?.data.map((key) => key.id)).toEqual(ids(all.slice(LIMIT, 2 * LIMIT)));
    expect(back?.data.map((key) => key.id)).toEqual(ids(all.slice(0, LIMIT)));
    expectTypeOf(first).toEqualTypeOf<ApiKeyPage<typeof API_VERSION>>();
    expectTypeOf(first.data).toEqualTypeOf<ApiKey<typeof API_VERSION>[]>();
  });
});

describe('repeated cursors', () => {
  const key = (id: string) => ({ id, type: 'api_key', name: id, status: 'active' });

  it('makes listAll throw a PaginationError instead of looping', async () => {
    const scripted = await startScriptedServer([
      { status: 200, body: { data: [key('apikey_a')], has_more: true, first_id: 'apikey_a', last_id: 'apikey_a' } },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test' });

      const seen: string[] = [];
      const walk = async () => {
        for await (const each of client.apiKeys.listAll()) {
          seen.push(each.id);
        }
      };

      await expect(walk()).rejects.toThrow(PaginationError);
      expect(seen).toEqual(['apikey_a', 'apikey_a']);
      expect(scripted.requests.map((request) => request.url)).toEqual([
        '/v1/organizations/api_keys',
        '/v1/organizations/api_keys?after_id=apikey_a',
      ]);
    } finally {
      await scripted.close();
    }
  });

  it('makes listAll throw when the cursor it started from comes back', async () => {
    const scripted = await startScriptedServer([
      { status: 200, body: { data: [key('apikey_b')], has_more: true, first_id: 'apikey_b', last_id: 'apikey_start' } },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test' });

      await expect(collect(client.apiKeys.listAll({ after_id: 'apikey_start' }))).rejects.toMatchObject({
        type: 'pagination_error',
        status: undefined,
      });
      expect(scripted.requests).toHaveLength(1);
    } finally {
      await scripted.close();
    }
  });

  it('makes listAll and nextPage() throw on has_more with an empty page', async () => {
    const scripted = await startScriptedServer([
      { status: 200, body: { data: [], has_more: true, first_id: null, last_id: null } },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test' });

      await expect(collect(client.apiKeys.listAll())).rejects.toThrow(PaginationError);
      await expect((await client.apiKeys.list()).nextPage()).resolves.toBeNull();
    } finally {
      await scripted.close();
    }
  });

  it('makes nextPage() throw when the server returns the cursor it was given', async () => {
    const scripted = await startScriptedServer([
      { status: 200, body: { data: [key('apikey_c')], has_more: true, first_id: 'apikey_c', last_id: 'apikey_c' } },
    ]);
    try {
      const client = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test' });
      const second = await (await client.apiKeys.list()).nextPage();

      await expect(second?.nextPage()).rejects.toThrow(PaginationError);
      expect(scripted.requests).toHaveLength(2);
    } finally {
      await scripted.close();
    }
  });
});
