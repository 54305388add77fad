import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowMicros } from '../src/time.js';
import type { ApiKeyFilters, ApiKeyRecord, NewApiKey, Store } from '../src/types.js';
import { testEngines } from '../testing/engines.js';
import { expectWalksInBothDirections, ids, listAll, matches, type StoreUnderTest } from './conformance.js';
import { CONFORMANCE_SUBJECTS } from './engine-stores.js';

const ALICE = { id: 'user_alice', type: 'user' } as const;

// Every engine of the run (PostgreSQL always in CI) keeps permissions and metadata, and lists by permission, alike.
describe.each(await testEngines())('permissions and metadata on $name', ({ kind }) => {
  let subject: StoreUnderTest;
  let store: Store;
  let organizations = 0;

  beforeAll(async () => {
    const [first] = CONFORMANCE_SUBJECTS[kind];
    subject = await (first as NonNullable<typeof first>).open();
    store = subject.store;
    await subject.migrator.migrateToLatest();
  });

  afterAll(async () => {
    await store?.close();
    await subject?.cleanup?.();
  });

  const newOrganization = async () => {
    organizations += 1;
    return (await store.createOrganization(`permissions organization ${organizations}`)).id;
  };
  const newKey = (organizationId: string, overrides: Partial<NewApiKey> = {}) =>
    store.createApiKey({ organizationId, name: 'a key', createdBy: ALICE, ...overrides });
  const trailOf = async (organizationId: string, targetId: string) => {
    const trail = await store.listAuditEvents({ organizationId, limit: 100, filters: { targetId } });
    return trail.kind === 'page' ? trail.events : [];
  };

  it('keeps both as given, and returns them from every read', async () => {
    const organizationId = await newOrganization();
    const metadata = { owner: 'team-a', plan: 'pro', nested: { list: [1, 'two', null, true], empty: {} }, n: 1.5 };
    const { apiKey } = await newKey(organizationId, { permissions: ['documents.read', 'admin.*'], metadata });

    expect(apiKey).toMatchObject({ permissions: ['documents.read', 'admin.*'], metadata });
    expect(await store.getApiKey(organizationId, apiKey.id)).toMatchObject({
      permissions: apiKey.permissions,
      metadata,
    });
    expect((await listAll(store, organizationId))[0]).toMatchObject({ permissions: apiKey.permissions, metadata });
  });

  it('an update replaces each as a whole, and records the values before and after', async () => {
    const organizationId = await newOrganization();
    const { apiKey } = await newKey(organizationId, { permissions: ['a.read', 'b.read'], metadata: { x: 1, y: 2 } });

    const updated = await store.updateApiKey(organizationId, apiKey.id, {
      permissions: ['c.*'],
      metadata: { z: 3 },
    });
    const cleared = await store.updateApiKey(organizationId, apiKey.id, { permissions: [], metadata: {} });
    // The same values again: nothing changes, and no event is recorded.
    await store.updateApiKey(organizationId, apiKey.id, { permissions: [], metadata: {} });
    const renamed = await store.updateApiKey(organizationId, apiKey.id, { name: 'renamed' });

    expect(updated).toMatchObject({ permissions: ['c.*'], metadata: { z: 3 } });
    expect(cleared).toMatchObject({ permissions: [], metadata: {} });
    expect(renamed).toMatchObject({ name: 'renamed', permissions: [], metadata: {} });
    expect((await trailOf(organizationId, apiKey.id)).map((event) => [event.type, event.changes])).toEqual([
      ['api_key.updated', { name: { from: 'a key', to: 'renamed' } }],
      ['api_key.updated', { permissions: { from: ['c.*'], to: [] }, metadata: { from: { z: 3 }, to: {} } }],
      [
        'api_key.updated',
        { permissions: { from: ['a.read', 'b.read'], to: ['c.*'] }, metadata: { from: { x: 1, y: 2 }, to: { z: 3 } } },
      ],
      [
        'api_key.created',
        {
          name: { from: null, to: 'a key' },
          status: { from: null, to: 'active' },
          permissions: { from: null, to: ['a.read', 'b.read'] },
          metadata: { from: null, to: { x: 1, y: 2 } },
        },
      ],
    ]);
  });

  it('a creation without them records neither', async () => {
    const organizationId = await newOrganization();
    const { apiKey } = await newKey(organizationId);

    expect(apiKey).toMatchObject({ permissions: [], metadata: {} });
    expect((await trailOf(organizationId, apiKey.id))[0]?.changes).toEqual({
      name: { from: null, to: 'a key' },
      status: { from: null, to: 'active' },
    });
  });

  it('a rotation gives the new key the same permissions and metadata', async () => {
    const organizationId = await newOrganization();
    const { apiKey } = await newKey(organizationId, { permissions: ['documents.*'], metadata: { owner: 'b' } });

    const rotated = await store.rotateApiKey({ organizationId, id: apiKey.id, gracePeriodMicros: 0, createdBy: ALICE });

    expect(rotated.kind).toBe('rotated');
    if (rotated.kind === 'rotated') {
      expect(rotated.created.apiKey).toMatchObject({ permissions: ['documents.*'], metadata: { owner: 'b' } });
      expect(ids(await listAll(store, organizationId, { permission: 'documents.read' }))).toEqual([
        rotated.created.apiKey.id,
        apiKey.id,
      ]);
    }
  });

  describe('the permission filter', () => {
    let organizationId: string;
    let keys: ApiKeyRecord[];
    const HELD = [
      ['documents.read'],
      ['documents.*'],
      ['*'],
      ['documents.read', 'documents.*'],
      ['documents.reader'],
      ['documentsx.read'],
      ['doc.*'],
      ['documents'],
      [],
      ['documents.read.own'],
      ['billing.read'],
      ['documents.drafts.*', 'billing.*'],
    ];

    beforeAll(async () => {
      organizationId = await newOrganization();
      keys = [];
      // Three rounds, each key of a round with one of the permission sets, some inactive, some in a workspace.
      for (let round = 0; round < 3; round++) {
        for (const [index, permissions] of HELD.entries()) {
          const { apiKey } = await newKey(organizationId, {
            name: `key ${round}.${index}`,
            permissions,
            status: index % 3 === 0 ? 'inactive' : 'active',
            workspaceId: index % 2 === 0 ? 'wrkspc_even' : null,
          });
          keys.unshift(apiKey);
        }
      }
      // A key of another organization that grants everything never shows.
      await newKey(await newOrganization(), { permissions: ['*'] });
    });

    it.each([
      'documents.read',
      'documents.write',
      'documents.*',
      'documents',
      'documents.drafts.edit',
      'documents.read.own',
      'billing.read',
      'nothing.at.all',
      '*',
    ])('%s returns exactly the keys whose permissions grant it, newest first, in pages both ways', async (name) => {
      const filters: ApiKeyFilters = { permission: name };
      const expected = keys.filter((key) => matches(key, filters));

      expect(ids(await listAll(store, organizationId, filters))).toEqual(ids(expected));
      if (expected.length > 0) {
        await expectWalksInBothDirections(store, organizationId, 2, filters, expected);
      }
    });

    it.each<[string, ApiKeyFilters]>([
      ['a status', { status: 'active' }],
      ['a workspace', { workspaceId: 'wrkspc_even' }],
      ['the default workspace', { workspaceId: null }],
      ['statuses and a creator', { status: ['inactive', 'archived'], createdByUserId: 'user_alice' }],
    ])('combines with %s', async (_, others) => {
      const filters: ApiKeyFilters = { ...others, permission: 'documents.read' };
      const expected = keys.filter((key) => matches(key, filters, nowMicros()));

      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(keys.filter((key) => matches(key, { permission: 'documents.read' })).length);
      await expectWalksInBothDirections(store, organizationId, 3, filters, expected);
    });

    it('follows an update: a key leaves the filter when it loses the permission, and joins when it gains it', async () => {
      const holder = keys.find((key) => key.permissions?.join() === 'documents.read') as ApiKeyRecord;
      const other = keys.find((key) => key.permissions?.join() === 'billing.read') as ApiKeyRecord;

      await store.updateApiKey(organizationId, holder.id, { permissions: ['billing.read'] });
      await store.updateApiKey(organizationId, other.id, { permissions: ['documents.*', 'billing.read'] });
      const listed = ids(await listAll(store, organizationId, { permission: 'documents.read' }));

      expect(listed).not.toContain(holder.id);
      expect(listed).toContain(other.id);
      expect(ids(await listAll(store, organizationId, { permission: 'billing.read' }))).toContain(holder.id);
      // Back as they were, for the other tests.
      await store.updateApiKey(organizationId, holder.id, { permissions: ['documents.read'] });
      await store.updateApiKey(organizationId, other.id, { permissions: ['billing.read'] });
    });
  });
});
