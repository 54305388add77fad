import type Anthropic from '@anthropic-ai/sdk';
import { startTestServer, type TestServer } from '@apikeys/server/testing';
import type { ApiKeyRecord } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKey } from './support/keys.js';
import { collect, sdkClient } from './support/sdk.js';

const KEY_COUNT = 7;

describe('SDK auto-pagination (client.beta.organization.apiKeys.list)', () => {
  let server: TestServer;
  let client: Anthropic;
  /** The organization's keys, newest first. */
  let newestFirst: string[];

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.createOrganization('sdk pagination');
    const created: ApiKeyRecord[] = [];
    for (let index = 0; index < KEY_COUNT; index += 1) {
      created.push(await storeKey(server.store, org.id, { name: `key ${index}` }));
    }
    // Keys created one after the other have distinct creation times, so the order does not rest on the ID tie-break.
    expect(new Set(created.map((key) => key.createdAt)).size).toBe(KEY_COUNT);
    newestFirst = created.sort((a, b) => b.createdAt - a.createdAt).map((key) => key.id);
    client = sdkClient(org.adminKey, server.baseUrl);
  });
  afterAll(() => server.close());

  const ids = (keys: { id: string }[]) => keys.map((key) => key.id);

  it('for await over list({ limit: 2 }) yields every key exactly once, newest first', async () => {
    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 2 }));

    expect(ids(keys)).toEqual(newestFirst);
  });

  it('pages forwards with after_id = last_id until has_more is false', async () => {
    const first = await client.beta.organization.apiKeys.list({ limit: 3 });

    const pages = [];
    for await (const page of first.iterPages()) {
      pages.push({ ids: ids(page.data), has_more: page.has_more, first_id: page.first_id, last_id: page.last_id });
    }

    expect(pages).toEqual([
      { ids: newestFirst.slice(0, 3), has_more: true, first_id: newestFirst[0], last_id: newestFirst[2] },
      { ids: newestFirst.slice(3, 6), has_more: true, first_id: newestFirst[3], last_id: newestFirst[5] },
      { ids: newestFirst.slice(6), has_more: false, first_id: newestFirst[6], last_id: newestFirst[6] },
    ]);
  });

  it('starts after a key with after_id and continues to the oldest key', async () => {
    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 2, after_id: newestFirst[1] }));

    expect(ids(keys)).toEqual(newestFirst.slice(2));
  });

  it('walks backwards from before_id: each next page is the newer one, newest first inside', async () => {
    // The SDK's Page has no getPreviousPage: a list that starts with before_id keeps paging with before_id set
    // to each page's first_id, towards the newest key, until has_more is false.
    const first = await client.beta.organization.apiKeys.list({ limit: 2, before_id: newestFirst[KEY_COUNT - 1] });

    const pages = [];
    for await (const page of first.iterPages()) {
      pages.push({ ids: ids(page.data), has_more: page.has_more });
    }

    expect(pages).toEqual([
      { ids: newestFirst.slice(4, 6), has_more: true },
      { ids: newestFirst.slice(2, 4), has_more: true },
      { ids: newestFirst.slice(0, 2), has_more: false },
    ]);
  });

  it('for await from before_id yields every newer key exactly once, page by page towards the newest', async () => {
    const oldest = newestFirst[KEY_COUNT - 1];

    const keys = await collect(client.beta.organization.apiKeys.list({ limit: 2, before_id: oldest }));

    expect(ids(keys)).toEqual([...newestFirst.slice(4, 6), ...newestFirst.slice(2, 4), ...newestFirst.slice(0, 2)]);
    expect(new Set(ids(keys)).size).toBe(KEY_COUNT - 1);
  });

  it('getNextPage on a backwards page returns the newer page, and hasNextPage is false at the newest key', async () => {
    const first = await client.beta.organization.apiKeys.list({ limit: 2, before_id: newestFirst[4] });

    const next = await first.getNextPage();

    expect([ids(first.data), first.has_more, first.hasNextPage()]).toEqual([newestFirst.slice(2, 4), true, true]);
    expect([ids(next.data), next.has_more, next.hasNextPage()]).toEqual([newestFirst.slice(0, 2), false, false]);
  });

  it('an empty organization gives one empty page and ends the iteration', async () => {
    const empty = await server.createOrganization('sdk pagination, no keys');
    const emptyClient = sdkClient(empty.adminKey, server.baseUrl);

    const page = await emptyClient.beta.organization.apiKeys.list();

    expect([page.data, page.has_more, page.first_id, page.last_id, page.hasNextPage()]).toEqual([
      [],
      false,
      null,
      null,
      false,
    ]);
    expect(await collect(emptyClient.beta.organization.apiKeys.list({ limit: 2 }))).toEqual([]);
  });
});
