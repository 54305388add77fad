import { grants } from '@apikeys/permissions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpiredApiKeyError } from '../src/expired-api-key-error.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { hashSecret } from '../src/secrets.js';
import { seedApiKeys } from '../src/seeding/index.js';
import { EFFECTIVE_API_KEY_STATUSES, effectiveStatus } from '../src/statuses.js';
import { nowMicros } from '../src/time.js';
import type {
  ApiKeyFilters,
  ApiKeyPatch,
  ApiKeyRecord,
  ApiKeyStatus,
  EffectiveApiKeyStatus,
  EpochMicros,
  ListApiKeysQuery,
  ListApiKeysResult,
  OpenedStore,
  PageCursor,
  Store,
} from '../src/types.js';
import { migrationNames } from '../testing/index.js';

/**
 * A store under test, made by a factory of the dialect being tested: an opened store on a new, empty and not yet
 * migrated database. The suite migrates it with its migrator, and closes the store at the end.
 */
export interface StoreUnderTest extends OpenedStore {
  /** Called after the store is closed, e.g. to delete a temporary file or schema. */
  cleanup?: () => Promise<void>;
  /**
   * Optional back door that sets `created_at` (microseconds since the epoch) of the given API keys. The Store API
   * cannot create keys with equal timestamps, so the tests of ties and timestamp precision run only when given.
   */
  setCreatedAt?: (apiKeyIds: readonly string[], micros: number) => Promise<void>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

const STATUSES: readonly ApiKeyStatus[] = ['active', 'inactive', 'archived'];
/** One second in microseconds, the unit of `createdAt`. */
const SECOND_MICROS = 1_000_000;
/** One hour in microseconds. */
const HOUR_MICROS = 3600 * SECOND_MICROS;
const API_SECRET = /^sk-api-[A-Za-z0-9]{49}$/;
const WORKSPACE_ID = /^wrkspc_[A-Za-z0-9]{24}$/;
const ALICE = { type: 'user', id: 'user_alice' } as const;
const ROTATOR = { type: 'service_account', id: 'svcacct_rotator' } as const;
const ADMIN_SECRET = /^sk-adm-[A-Za-z0-9]{49}$/;
const VERIFIER_SECRET = /^sk-vfy-[A-Za-z0-9]{49}$/;
const SEED_COUNT = 2000;
/** A seeded key's hint has the shape of a real API key's: prefix, four characters, `...`, four characters. */
const SEEDED_HINT = /^sk-api-[A-Za-z0-9]{4}\.\.\.[A-Za-z0-9]{4}$/;
/**
 * The rows per transaction of `seedApiKeys` that every factory must configure (`bulkLoadRowsPerCommit`), so that
 * seeding LARGE_SEED_COUNT keys takes several transactions of several chunks each, the last one partial.
 */
export const CONFORMANCE_ROWS_PER_COMMIT = 4_000;
const LARGE_SEED_COUNT = 9_000;
const OTHER_ORG_SEED_COUNT = 300;
const PAGE_SIZES = [1, 7, 100] as const;
const UNKNOWN_ID = 'apikey_000000000000000000000000';
/** Patches that change nothing. Their type refuses them, so they can reach the store only past the compiler. */
const EMPTY_PATCHES = [{}, { name: undefined, status: undefined, expiresAt: undefined }] as unknown as ApiKeyPatch[];

/** The hint a secret must have: the prefix and 4 more characters, `...`, the last 4 characters. */
function expectedHint(secret: string): string {
  return `${secret.slice(0, 'sk-xxx-'.length + 4)}...${secret.slice(-4)}`;
}

/** The list order: createdAt descending, then id descending (binary order). */
function newestFirst(a: ApiKeyRecord, b: ApiKeyRecord): number {
  if (a.createdAt !== b.createdAt) {
    return a.createdAt < b.createdAt ? 1 : -1;
  }
  if (a.id === b.id) {
    return 0;
  }
  return a.id < b.id ? 1 : -1;
}

/**
 * The filters as the contract defines them, evaluated in memory at `now` to compute expected results: the status
 * filter by effective status (statuses.test.ts pins `effectiveStatus` down), any of a list. A null workspace filter
 * is the default workspace: a null workspace with workspace scope.
 */
export function matches(key: ApiKeyRecord, filters: ApiKeyFilters, now: EpochMicros = nowMicros()): boolean {
  const statuses: readonly EffectiveApiKeyStatus[] | undefined =
    typeof filters.status === 'string' ? [filters.status] : filters.status;
  return (
    (statuses === undefined || statuses.includes(effectiveStatus(key, now))) &&
    (filters.workspaceId === undefined ||
      (key.workspaceId === filters.workspaceId && (key.workspaceId !== null || key.scope === 'workspace'))) &&
    (filters.createdByUserId === undefined ||
      (key.createdBy.type === 'user' && key.createdBy.id === filters.createdByUserId)) &&
    (filters.permission === undefined ||
      (key.permissions ?? []).some((held) => grants(held, filters.permission as string)))
  );
}

export function ids(keys: readonly ApiKeyRecord[]): string[] {
  return keys.map((key) => key.id);
}

function at<T>(items: readonly T[], index: number): T {
  const item = items.at(index);
  if (item === undefined) {
    throw new Error(`no item at index ${index} of ${items.length}`);
  }
  return item;
}

/** Lists a page that must exist (the cursor, if any, names a key of the organization). */
export async function listPage(
  store: Store,
  query: ListApiKeysQuery,
): Promise<Extract<ListApiKeysResult, { kind: 'page' }>> {
  const result = await store.listApiKeys(query);
  if (result.kind !== 'page') {
    throw new Error(`listApiKeys found no page (${result.kind}) for ${JSON.stringify(query)}`);
  }
  return result;
}

/** Every key of the organization matching the filters, in one page with a limit larger than any test data. */
export async function listAll(
  store: Store,
  organizationId: string,
  filters: ApiKeyFilters = {},
  now?: EpochMicros,
): Promise<ApiKeyRecord[]> {
  const page = await listPage(store, { organizationId, limit: 100_000, filters, now });
  expect(page.hasMore).toBe(false);
  return page.keys;
}

/**
 * Walks from the newest key with `after` cursors and returns the IDs in the order received. Checks that every page
 * but the last is full and says hasMore, and that the last says it is the last.
 */
async function walkForwards(
  store: Store,
  organizationId: string,
  limit: number,
  filters: ApiKeyFilters,
  expectedCount: number,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: PageCursor | undefined;
  for (;;) {
    const page = await listPage(store, { organizationId, limit, cursor, filters });
    seen.push(...ids(page.keys));
    if (!page.hasMore) {
      return seen;
    }
    expect(page.keys).toHaveLength(limit);
    if (seen.length > expectedCount) {
      throw new Error(`walked past the ${expectedCount} expected keys`);
    }
    cursor = { direction: 'after', id: at(page.keys, -1).id };
  }
}

/**
 * Walks from the oldest matching key towards the newest with `before` cursors and returns all IDs newest first,
 * the starting key included. Same page checks as the forward walk.
 */
async function walkBackwards(
  store: Store,
  organizationId: string,
  limit: number,
  filters: ApiKeyFilters,
  oldest: ApiKeyRecord,
  expectedCount: number,
): Promise<string[]> {
  const pages: string[][] = [[oldest.id]];
  let seen = 1;
  let cursor: PageCursor = { direction: 'before', id: oldest.id };
  for (;;) {
    const page = await listPage(store, { organizationId, limit, cursor, filters });
    pages.unshift(ids(page.keys));
    seen += page.keys.length;
    if (!page.hasMore) {
      return pages.flat();
    }
    expect(page.keys).toHaveLength(limit);
    if (seen > expectedCount) {
      throw new Error(`walked past the ${expectedCount} expected keys`);
    }
    cursor = { direction: 'before', id: at(page.keys, 0).id };
  }
}

/** Walks all matching keys in both directions and checks each is seen exactly once, in the expected order. */
export async function expectWalksInBothDirections(
  store: Store,
  organizationId: string,
  limit: number,
  filters: ApiKeyFilters,
  expected: readonly ApiKeyRecord[],
): Promise<void> {
  const expectedIds = ids(expected);
  expect(await walkForwards(store, organizationId, limit, filters, expected.length)).toEqual(expectedIds);
  expect(await walkBackwards(store, organizationId, limit, filters, at(expected, -1), expected.length)).toEqual(
    expectedIds,
  );
}

/**
 * Registers the conformance suite of the `Store` contract for one dialect. Every dialect must pass it unchanged.
 * The factory is called once; each test makes its own organization, so tests never see each other's keys.
 */
export function describeStoreConformance(
  name: string,
  factory: StoreFactory,
  options: {
    /** Whether the factory's stores have `setCreatedAt`, which the tests of equal `created_at` need. */
    equalTimestamps: boolean;
    /** The connections per pool of the factory's stores; undefined for stores without pools (SQLite). */
    poolSize?: number;
  },
): void {
  describe(`Store conformance: ${name}`, () => {
    let subject: StoreUnderTest;
    let store: Store;
    let appliedMigrations: string[];
    let organizationCount = 0;

    const newOrganization = async (label = 'test') => {
      organizationCount += 1;
      return (await store.createOrganization(`${label} organization ${organizationCount}`)).id;
    };
    const newKey = async (organizationId: string, overrides: Partial<Parameters<Store['createApiKey']>[0]> = {}) =>
      store.createApiKey({
        organizationId,
        name: 'a key',
        createdBy: { id: 'user_alice', type: 'user' },
        ...overrides,
      });

    beforeAll(async () => {
      subject = await factory();
      store = subject.store;
      appliedMigrations = await subject.migrator.migrateToLatest();
    });

    afterAll(async () => {
      await subject?.store.close();
      await subject?.cleanup?.();
    });

    describe('migrations', () => {
      it('migrateToLatest() on a new database applies every migration, in order', async () => {
        expect(appliedMigrations).toContain('0001-initial');
        expect(appliedMigrations).toEqual(await migrationNames());
      });

      it('migrateToLatest() a second time applies nothing and keeps the data', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);

        expect(await subject.migrator.migrateToLatest()).toEqual([]);

        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
      });

      it('the default organization exists after migrateToLatest(), with a default workspace ID', async () => {
        const organization = await store.getOrganization(DEFAULT_ORGANIZATION.id);

        expect(organization).toEqual({
          id: DEFAULT_ORGANIZATION.id,
          name: DEFAULT_ORGANIZATION.name,
          defaultWorkspaceId: expect.stringMatching(WORKSPACE_ID),
        });
        expect(await store.listOrganizations()).toContainEqual(organization);
      });
    });

    describe('organizations', () => {
      it('createOrganization returns an organization that get and list find', async () => {
        const organization = await store.createOrganization('Acme');

        expect(organization).toEqual({
          id: expect.stringMatching(/^org_[A-Za-z0-9]{24}$/),
          name: 'Acme',
          defaultWorkspaceId: expect.stringMatching(WORKSPACE_ID),
        });
        expect(await store.getOrganization(organization.id)).toEqual(organization);
        expect(await store.listOrganizations()).toContainEqual(organization);
      });

      it('every organization gets a default workspace ID of its own', async () => {
        const created = [await store.createOrganization('one'), await store.createOrganization('two')];
        const all = await store.listOrganizations();

        expect(created[0]?.defaultWorkspaceId).not.toBe(created[1]?.defaultWorkspaceId);
        expect(new Set(all.map((organization) => organization.defaultWorkspaceId)).size).toBe(all.length);
      });

      it('getOrganization of an unknown id returns undefined', async () => {
        expect(await store.getOrganization('org_doesnotexist')).toBeUndefined();
      });
    });

    describe('creating and getting API keys', () => {
      it('createApiKey returns the key with its secret once, and getApiKey the same key without it', async () => {
        const organizationId = await newOrganization();
        const before = Date.now();

        const { apiKey, secret } = await store.createApiKey({
          organizationId,
          name: 'Production',
          workspaceId: 'wrkspc_01',
          createdBy: { id: 'user_bob', type: 'user' },
        });

        expect(secret).toMatch(API_SECRET);
        expect(apiKey).toEqual({
          id: expect.stringMatching(/^apikey_[A-Za-z0-9]{24}$/),
          name: 'Production',
          workspaceId: 'wrkspc_01',
          createdAt: expect.any(Number),
          createdBy: { id: 'user_bob', type: 'user' },
          partialKeyHint: expectedHint(secret),
          status: 'active',
          scope: 'workspace',
          expiresAt: null,
          principal: null,
          lastUsedAt: null,
          permissions: [],
          metadata: {},
        });
        expect(Number.isSafeInteger(apiKey.createdAt)).toBe(true);
        expect(apiKey.createdAt).toBeGreaterThanOrEqual(before * 1000 - SECOND_MICROS);
        expect(apiKey.createdAt).toBeLessThanOrEqual(Date.now() * 1000 + SECOND_MICROS);
        const fetched = await store.getApiKey(organizationId, apiKey.id);
        expect(fetched).toEqual(apiKey);
        expect(JSON.stringify(fetched)).not.toContain(secret.slice('sk-api-'.length));
      });

      it('createApiKey without a workspace stores null; a given status and service account are kept', async () => {
        const organizationId = await newOrganization();

        const { apiKey } = await store.createApiKey({
          organizationId,
          name: 'CI',
          createdBy: { id: 'svcacct_ci', type: 'service_account' },
          status: 'inactive',
        });
        const nullWorkspace = await newKey(organizationId, { workspaceId: null, scope: 'workspace' });

        expect(apiKey).toMatchObject({
          workspaceId: null,
          scope: 'workspace',
          createdBy: { id: 'svcacct_ci', type: 'service_account' },
          status: 'inactive',
        });
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
        expect(nullWorkspace.apiKey).toMatchObject({ workspaceId: null, scope: 'workspace' });
      });

      it("createApiKey stores a workspace ID as given, even the organization's default workspace ID", async () => {
        const organization = await store.createOrganization('default workspace ID');

        const { apiKey } = await newKey(organization.id, { workspaceId: organization.defaultWorkspaceId });

        expect(apiKey).toMatchObject({ workspaceId: organization.defaultWorkspaceId, scope: 'workspace' });
        expect(await store.getApiKey(organization.id, apiKey.id)).toEqual(apiKey);
      });

      it('each key gets its own id, secret and hint, and a later key is newer', async () => {
        const organizationId = await newOrganization();

        const created = [];
        for (let i = 0; i < 50; i++) {
          created.push(await newKey(organizationId, { name: `key ${i}` }));
        }

        expect(new Set(created.map((c) => c.apiKey.id)).size).toBe(50);
        expect(new Set(created.map((c) => c.secret)).size).toBe(50);
        expect(new Set(created.map((c) => c.apiKey.partialKeyHint)).size).toBe(50);
        const listed = await listAll(store, organizationId);
        expect(ids(listed)).toEqual(ids(created.map((c) => c.apiKey).reverse()));
      });

      it('getApiKey of an unknown id returns undefined', async () => {
        const organizationId = await newOrganization();
        await newKey(organizationId);

        expect(await store.getApiKey(organizationId, UNKNOWN_ID)).toBeUndefined();
      });
    });

    describe('scopes, principals and expiry of new keys', () => {
      it('a key with organization scope has no workspace and keeps its principal', async () => {
        const organizationId = await newOrganization();

        const { apiKey } = await newKey(organizationId, { scope: 'organization', principal: ALICE });

        expect(apiKey).toMatchObject({ workspaceId: null, scope: 'organization', principal: ALICE });
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
      });

      it('a key with workspace scope may have a principal too, a user or a service account', async () => {
        const organization = await store.createOrganization('principals');
        const robot = { type: 'service_account', id: 'svcacct_robot' } as const;

        const { apiKey: named } = await newKey(organization.id, { workspaceId: 'wrkspc_01', principal: ALICE });
        const { apiKey: unnamed } = await newKey(organization.id, { scope: 'workspace', principal: robot });

        expect(named).toMatchObject({ workspaceId: 'wrkspc_01', scope: 'workspace', principal: ALICE });
        expect(unnamed).toMatchObject({ workspaceId: null, scope: 'workspace', principal: robot });
        expect(await store.getApiKey(organization.id, named.id)).toEqual(named);
        expect(await store.getApiKey(organization.id, unnamed.id)).toEqual(unnamed);
      });

      it.each<[string, Partial<Parameters<Store['createApiKey']>[0]>]>([
        ['without a principal', {}],
        ['with a null principal', { principal: null }],
        ['with a workspace', { principal: ALICE, workspaceId: 'wrkspc_01' }],
      ])('organization scope %s is a TypeError and creates nothing', async (_, overrides) => {
        const organizationId = await newOrganization();

        await expect(newKey(organizationId, { scope: 'organization', ...overrides })).rejects.toThrow(TypeError);

        expect(await listAll(store, organizationId)).toEqual([]);
      });

      it('createApiKey keeps a given expiry, even a past one; null or none means never', async () => {
        const organizationId = await newOrganization();
        const now = nowMicros();

        const { apiKey: later } = await newKey(organizationId, { expiresAt: now + HOUR_MICROS });
        const { apiKey: past } = await newKey(organizationId, { expiresAt: now - HOUR_MICROS });
        const { apiKey: never } = await newKey(organizationId, { expiresAt: null });

        expect([later.expiresAt, past.expiresAt, never.expiresAt]).toEqual([
          now + HOUR_MICROS,
          now - HOUR_MICROS,
          null,
        ]);
        expect(await store.getApiKey(organizationId, later.id)).toEqual(later);
        expect(ids(await listAll(store, organizationId, { status: 'expired' }))).toEqual([past.id]);
      });
    });

    describe('health', () => {
      it('ping() resolves once the database answers', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('countActiveAdminKeys() counts active admin keys of every organization, not disabled ones', async () => {
        const before = await store.countActiveAdminKeys();
        const { adminKey } = await store.createAdminKey({ organizationId: await newOrganization(), name: 'a' });
        await store.createAdminKey({ organizationId: await newOrganization(), name: 'b' });

        expect(await store.countActiveAdminKeys()).toBe(before + 2);

        await store.setAdminKeyStatus(adminKey.id, 'disabled');

        expect(await store.countActiveAdminKeys()).toBe(before + 1);
      });
    });

    describe('pool statistics', () => {
      const { poolSize } = options;
      const poolsOf = (stats: ReturnType<Store['poolStats']>) =>
        Object.fromEntries((stats ?? []).map(({ pool, ...usage }) => [pool, usage]));

      if (poolSize === undefined) {
        it('poolStats() is undefined for a store without pools', () => {
          expect(store.poolStats()).toBeUndefined();
        });
        return;
      }

      it('poolStats() counts statements in flight; afterwards every pool is idle and within its size', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);

        const reads = Array.from({ length: 10 }, () => store.getApiKey(organizationId, apiKey.id));
        const during = poolsOf(store.poolStats());
        const inTransaction = await store.transaction(async () => poolsOf(store.poolStats()));
        await Promise.all(reads);
        const after = poolsOf(store.poolStats());

        expect(Object.keys(after).sort()).toEqual(['maintenance', 'pipeline', 'transactions']);
        const pipeline = during.pipeline ?? { size: 0, inUse: 0, waiting: 0 };
        expect(pipeline.inUse).toBeGreaterThanOrEqual(1);
        expect(pipeline.inUse + pipeline.waiting).toBe(10);
        expect(inTransaction.transactions?.inUse).toBeGreaterThanOrEqual(1);
        for (const usage of Object.values(after)) {
          expect(usage.size).toBeLessThanOrEqual(poolSize);
          expect(usage).toMatchObject({ inUse: 0, waiting: 0 });
        }
        expect(after.pipeline?.size).toBeGreaterThanOrEqual(1);
      });
    });

    describe('credentials', () => {
      it('findCredential finds an API key by the hash of its secret, with its organization', async () => {
        const organizationId = await newOrganization();
        const { secret } = await newKey(organizationId);

        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'api_key', organizationId });
      });

      it('createAdminKey returns the secret once and findCredential finds the admin key by its hash', async () => {
        const organizationId = await newOrganization();

        const { adminKey, secret } = await store.createAdminKey({ organizationId, name: 'ops' });

        expect(secret).toMatch(ADMIN_SECRET);
        expect(adminKey).toEqual({
          id: expect.stringMatching(/^adminkey_[A-Za-z0-9]{24}$/),
          organizationId,
          name: 'ops',
          partialKeyHint: expectedHint(secret),
          status: 'active',
        });
        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'admin_key', adminKey });
      });

      it('setAdminKeyStatus disables and re-enables an admin key, and findCredential reflects it', async () => {
        const organizationId = await newOrganization();
        const { adminKey, secret } = await store.createAdminKey({ organizationId, name: 'ops' });

        const disabled = await store.setAdminKeyStatus(adminKey.id, 'disabled');

        expect(disabled).toEqual({ ...adminKey, status: 'disabled' });
        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'admin_key', adminKey: disabled });
        await store.setAdminKeyStatus(adminKey.id, 'active');
        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'admin_key', adminKey });
      });

      it('setAdminKeyStatus of an unknown id returns undefined', async () => {
        expect(await store.setAdminKeyStatus('adminkey_doesnotexist', 'disabled')).toBeUndefined();
      });

      it('findCredential of an unknown hash, a near miss or an unhashed secret is unknown', async () => {
        const organizationId = await newOrganization();
        const { secret } = await newKey(organizationId);
        const { secret: adminSecret } = await store.createAdminKey({ organizationId, name: 'ops' });
        const nearMiss = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;

        expect(await store.findCredential(hashSecret('sk-api-unknown'))).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(hashSecret(nearMiss))).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(secret)).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(adminSecret)).toEqual({ kind: 'unknown' });
      });
    });

    describe('verifier keys and verification lookups', () => {
      it('createVerifierKey returns the secret once; findCredential finds the verifier key by its hash', async () => {
        const organizationId = await newOrganization();

        const { verifierKey, secret } = await store.createVerifierKey({ organizationId, name: 'gateway' });

        expect(secret).toMatch(VERIFIER_SECRET);
        expect(verifierKey).toEqual({
          id: expect.stringMatching(/^verifierkey_[A-Za-z0-9]{24}$/),
          organizationId,
          name: 'gateway',
          partialKeyHint: expectedHint(secret),
          status: 'active',
        });
        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'verifier_key', verifierKey });
        expect(await store.findCredential(hashSecret(secret), 'verifier')).toEqual({
          kind: 'verifier_key',
          verifierKey,
        });
      });

      it('findActiveCredentials keeps the active admin and verifier keys it is asked about, by kind', async () => {
        const organizationId = await newOrganization();
        const { adminKey } = await store.createAdminKey({ organizationId, name: 'active admin' });
        const { adminKey: disabledAdmin } = await store.createAdminKey({ organizationId, name: 'disabled admin' });
        const { verifierKey } = await store.createVerifierKey({ organizationId, name: 'active verifier' });
        const { verifierKey: disabledVerifier } = await store.createVerifierKey({ organizationId, name: 'disabled' });
        await store.setAdminKeyStatus(disabledAdmin.id, 'disabled');
        await store.setVerifierKeyStatus(disabledVerifier.id, 'disabled');
        const unknown = Array.from({ length: 600 }, (_, n) => ({ kind: 'admin_key' as const, id: `adminkey_${n}` }));

        const active = await store.findActiveCredentials([
          { kind: 'admin_key', id: adminKey.id },
          { kind: 'admin_key', id: disabledAdmin.id },
          { kind: 'verifier_key', id: verifierKey.id },
          { kind: 'verifier_key', id: disabledVerifier.id },
          // An ID of one kind asked for as the other is not that key.
          { kind: 'verifier_key', id: adminKey.id },
          ...unknown,
          { kind: 'admin_key', id: adminKey.id },
        ]);

        expect(active).toEqual([
          { kind: 'admin_key', id: adminKey.id },
          { kind: 'verifier_key', id: verifierKey.id },
        ]);
        expect(await store.findActiveCredentials([])).toEqual([]);
      });

      it('setVerifierKeyStatus disables and re-enables a verifier key; an unknown one is undefined', async () => {
        const organizationId = await newOrganization();
        const { verifierKey, secret } = await store.createVerifierKey({ organizationId, name: 'gateway' });

        const disabled = await store.setVerifierKeyStatus(verifierKey.id, 'disabled');
        const found = await store.findCredential(hashSecret(secret), 'verifier');
        const enabled = await store.setVerifierKeyStatus(verifierKey.id, 'active');

        expect(disabled).toEqual({ ...verifierKey, status: 'disabled' });
        expect(found).toEqual({ kind: 'verifier_key', verifierKey: disabled });
        expect(enabled).toEqual(verifierKey);
        expect(await store.setVerifierKeyStatus('verifierkey_doesnotexist', 'disabled')).toBeUndefined();
      });

      it('findCredential with a kind looks only at keys of that kind', async () => {
        const organizationId = await newOrganization();
        const { secret } = await newKey(organizationId);
        const { secret: adminSecret } = await store.createAdminKey({ organizationId, name: 'ops' });

        expect(await store.findCredential(hashSecret(secret), 'apiKey')).toEqual({ kind: 'api_key', organizationId });
        expect(await store.findCredential(hashSecret(secret), 'admin')).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(hashSecret(adminSecret), 'verifier')).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(hashSecret(adminSecret), 'admin')).toMatchObject({ kind: 'admin_key' });
      });

      it('recordKeyUsage sets when keys were last used, never moving it back, and every read shows it', async () => {
        const organizationId = await newOrganization();
        const { apiKey: first } = await newKey(organizationId, { name: 'first' });
        const { apiKey: second } = await newKey(organizationId, { name: 'second' });
        const { apiKey: unused } = await newKey(organizationId, { name: 'unused' });
        const minute = 60_000_000;

        await store.recordKeyUsage([
          { id: first.id, organizationId, lastUsedAt: 100 * minute },
          { id: second.id, organizationId, lastUsedAt: 100 * minute },
        ]);
        await store.recordKeyUsage([
          { id: first.id, organizationId, lastUsedAt: 101 * minute },
          { id: second.id, organizationId, lastUsedAt: 99 * minute },
        ]);
        await store.recordKeyUsage([]);
        const page = await listPage(store, { organizationId, limit: 10 });
        const renamed = await store.updateApiKey(organizationId, first.id, { name: 'renamed' });

        expect(page.keys.map((key) => [key.name, key.lastUsedAt])).toEqual([
          ['unused', null],
          ['second', 100 * minute],
          ['first', 101 * minute],
        ]);
        expect(renamed?.lastUsedAt).toBe(101 * minute);
        expect((await store.getApiKey(organizationId, second.id))?.lastUsedAt).toBe(100 * minute);
        expect((await store.getApiKey(organizationId, unused.id))?.lastUsedAt).toBeNull();
      });

      it("recordKeyUsage ignores a use naming another organization's key or no key, and records the rest", async () => {
        const organizationId = await newOrganization();
        const other = await newOrganization('other');
        const { apiKey: ours } = await newKey(organizationId, { name: 'ours' });
        const { apiKey: theirs } = await newKey(other, { name: 'theirs' });
        const minute = 60_000_000;

        await store.recordKeyUsage([
          { id: theirs.id, organizationId, lastUsedAt: 100 * minute },
          { id: 'apikey_000000000000000000000000', organizationId, lastUsedAt: 100 * minute },
          { id: ours.id, organizationId, lastUsedAt: 100 * minute },
        ]);

        expect((await store.getApiKey(organizationId, ours.id))?.lastUsedAt).toBe(100 * minute);
        expect((await store.getApiKey(other, theirs.id))?.lastUsedAt).toBeNull();
      });

      it('findKeysInUse reads when and what the keys of the organization are, leaving out others and unknown IDs', async () => {
        const organizationId = await newOrganization();
        const other = await newOrganization('other');
        const { apiKey: active } = await newKey(organizationId, {
          name: 'active',
          expiresAt: nowMicros() + HOUR_MICROS,
        });
        const { apiKey: inactive } = await newKey(organizationId, { name: 'inactive', status: 'inactive' });
        const { apiKey: theirs } = await newKey(other, { name: 'theirs' });
        const many = Array.from({ length: 1_200 }, (_, n) => `apikey_${String(n).padStart(24, '0')}`);

        const found = await store.findKeysInUse(organizationId, [
          active.id,
          inactive.id,
          theirs.id,
          active.id,
          ...many,
          inactive.id,
        ]);

        expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
          [
            { id: active.id, createdAt: active.createdAt, status: 'active', expiresAt: active.expiresAt },
            { id: inactive.id, createdAt: inactive.createdAt, status: 'inactive', expiresAt: null },
          ].sort((a, b) => a.id.localeCompare(b.id)),
        );
        expect(await store.findKeysInUse(organizationId, [])).toEqual([]);
      });

      it('findApiKeyBySecretHash finds the key of a secret, in whichever organization, as getApiKey reads it', async () => {
        const organizationId = await newOrganization();
        const other = await newOrganization('other');
        const { apiKey, secret } = await newKey(organizationId, { status: 'inactive' });
        const { secret: adminSecret } = await store.createAdminKey({ organizationId: other, name: 'ops' });

        expect(await store.findApiKeyBySecretHash(hashSecret(secret))).toEqual({
          organizationId,
          // Everything but when it was last used, which a verification does not read.
          apiKey: { ...(await store.getApiKey(organizationId, apiKey.id)), lastUsedAt: undefined },
        });
        expect(await store.findApiKeyBySecretHash(hashSecret(adminSecret))).toBeUndefined();
        expect(await store.findApiKeyBySecretHash(hashSecret('sk-api-unknown'))).toBeUndefined();
        expect(await store.findApiKeyBySecretHash(secret)).toBeUndefined();
      });
    });

    describe('updating API keys', () => {
      it('a patch with only a name changes the name and nothing else', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId, { workspaceId: 'wrkspc_01', status: 'inactive' });

        const updated = await store.updateApiKey(organizationId, apiKey.id, { name: 'renamed' });

        expect(updated).toEqual({ ...apiKey, name: 'renamed' });
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(updated);
      });

      it('a patch with only a status changes the status and nothing else', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId, { name: 'keep me' });

        const updated = await store.updateApiKey(organizationId, apiKey.id, { status: 'archived' });

        expect(updated).toEqual({ ...apiKey, status: 'archived' });
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(updated);
      });

      it('a patch with both fields changes both', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);

        const updated = await store.updateApiKey(organizationId, apiKey.id, { name: 'both', status: 'inactive' });

        expect(updated).toEqual({ ...apiKey, name: 'both', status: 'inactive' });
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(updated);
      });

      it('a patch with only an expiry sets it, and a null expiry removes it; nothing else changes', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId, { name: 'keep me', status: 'inactive' });
        const expiresAt = nowMicros() + HOUR_MICROS;

        const set = await store.updateApiKey(organizationId, apiKey.id, { expiresAt });
        const setAgain = await store.getApiKey(organizationId, apiKey.id);
        const removed = await store.updateApiKey(organizationId, apiKey.id, { expiresAt: null });

        expect(set).toEqual({ ...apiKey, expiresAt });
        expect(setAgain).toEqual(set);
        expect(removed).toEqual(apiKey);
        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
      });

      it('a patch with every field changes every one, and a past expiry makes the key expired', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);
        const expiresAt = nowMicros() - SECOND_MICROS;

        const updated = await store.updateApiKey(organizationId, apiKey.id, {
          name: 'all',
          status: 'inactive',
          expiresAt,
        });

        expect(updated).toEqual({ ...apiKey, name: 'all', status: 'inactive', expiresAt });
        expect(ids(await listAll(store, organizationId, { status: 'expired' }))).toEqual([apiKey.id]);
        expect(await listAll(store, organizationId, { status: 'inactive' })).toEqual([]);
      });

      it('an empty patch, or one whose fields are undefined, is a TypeError and changes nothing', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId, { name: 'same', status: 'inactive' });

        for (const patch of EMPTY_PATCHES) {
          await expect(store.updateApiKey(organizationId, apiKey.id, patch)).rejects.toThrow(TypeError);
          await expect(store.updateApiKey(organizationId, UNKNOWN_ID, patch)).rejects.toThrow(TypeError);
        }

        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
      });

      it('updating an unknown id returns undefined', async () => {
        const organizationId = await newOrganization();
        await newKey(organizationId);

        expect(await store.updateApiKey(organizationId, UNKNOWN_ID, { name: 'x' })).toBeUndefined();
      });

      it.each<[string, ApiKeyPatch]>([
        ['status active', { status: 'active' }],
        ['status inactive', { status: 'inactive' }],
        ['a new expiry', { expiresAt: nowMicros() + HOUR_MICROS }],
        ['no expiry', { expiresAt: null }],
        ['a name and status active', { name: 'revived', status: 'active' }],
      ])('an expired key cannot get %s: ExpiredApiKeyError, and nothing changes', async (_, patch) => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId, { status: 'inactive', expiresAt: nowMicros() - SECOND_MICROS });

        await expect(store.updateApiKey(organizationId, apiKey.id, patch)).rejects.toEqual(
          new ExpiredApiKeyError(apiKey),
        );
        await expect(
          store.transaction((trx) => trx.updateApiKey(organizationId, apiKey.id, patch)),
        ).rejects.toBeInstanceOf(ExpiredApiKeyError);

        expect(await store.getApiKey(organizationId, apiKey.id)).toEqual(apiKey);
      });

      it('an expired key can be renamed and archived; an archived key whose expiry passed is not expired', async () => {
        const organizationId = await newOrganization();
        const expiresAt = nowMicros() - SECOND_MICROS;
        const { apiKey } = await newKey(organizationId, { expiresAt });

        expect(await store.updateApiKey(organizationId, apiKey.id, { name: 'renamed' })).toEqual({
          ...apiKey,
          name: 'renamed',
        });
        expect(await store.updateApiKey(organizationId, apiKey.id, { status: 'archived' })).toMatchObject({
          status: 'archived',
        });
        expect(await store.updateApiKey(organizationId, apiKey.id, { status: 'inactive' })).toMatchObject({
          status: 'inactive',
          expiresAt,
        });
      });

      it('an update sent before a rotation without grace period, but made after it, finds the key expired', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);
        let update: Promise<unknown> | undefined;

        await store.transaction(async (trx) => {
          // The rename holds the key (PostgreSQL: its row lock; SQLite: the one connection's transaction).
          await trx.updateApiKey(organizationId, apiKey.id, { name: 'held' });
          update = store.updateApiKey(organizationId, apiKey.id, { expiresAt: nowMicros() + HOUR_MICROS });
          update.catch(() => {});
          await new Promise((resolve) => setTimeout(resolve, 50));
          // Timed after the update was sent: only a clock read when the update is made sees the key expired.
          const rotation = await trx.rotateApiKey({
            organizationId,
            id: apiKey.id,
            gracePeriodMicros: 0,
            createdBy: ROTATOR,
          });
          expect(rotation.kind).toBe('rotated');
        });

        await expect(update).rejects.toBeInstanceOf(ExpiredApiKeyError);
        const key = (await store.getApiKey(organizationId, apiKey.id)) as ApiKeyRecord;
        expect(effectiveStatus(key, nowMicros() + SECOND_MICROS)).toBe('expired');
      });

      it('an update keeps the key in its place in the list order', async () => {
        const organizationId = await newOrganization();
        const created = [];
        for (let i = 0; i < 3; i++) {
          created.push((await newKey(organizationId, { name: `key ${i}` })).apiKey);
        }
        const listedBefore = ids(await listAll(store, organizationId));

        await store.updateApiKey(organizationId, at(created, 0).id, { name: 'renamed', status: 'archived' });

        expect(ids(await listAll(store, organizationId))).toEqual(listedBefore);
      });
    });

    describe('organization isolation', () => {
      let orgA: string;
      let orgB: string;
      let keyA: ApiKeyRecord;
      let keyB: ApiKeyRecord;

      beforeAll(async () => {
        orgA = await newOrganization('A');
        orgB = await newOrganization('B');
        // Identical attributes, so only the organization tells them apart.
        const shared = {
          name: 'same',
          workspaceId: 'wrkspc_shared',
          createdBy: { id: 'user_shared', type: 'user' },
        } as const;
        keyA = (await store.createApiKey({ organizationId: orgA, ...shared })).apiKey;
        keyB = (await store.createApiKey({ organizationId: orgB, ...shared })).apiKey;
      });

      it("getApiKey of another organization's key returns undefined", async () => {
        expect(await store.getApiKey(orgA, keyB.id)).toBeUndefined();
        expect(await store.getApiKey(orgB, keyB.id)).toEqual(keyB);
      });

      it("updateApiKey of another organization's key returns undefined and changes nothing", async () => {
        expect(await store.updateApiKey(orgA, keyB.id, { name: 'stolen', status: 'archived' })).toBeUndefined();
        for (const patch of EMPTY_PATCHES) {
          await expect(store.updateApiKey(orgA, keyB.id, patch)).rejects.toThrow(TypeError);
        }

        expect(await store.getApiKey(orgB, keyB.id)).toEqual(keyB);
      });

      it.each<[string, ApiKeyFilters]>([
        ['no filter', {}],
        ['status', { status: 'active' }],
        ['workspaceId', { workspaceId: 'wrkspc_shared' }],
        ['createdByUserId', { createdByUserId: 'user_shared' }],
        ['all filters', { status: 'active', workspaceId: 'wrkspc_shared', createdByUserId: 'user_shared' }],
      ])('listApiKeys with %s lists only the organization’s own key', async (_, filters) => {
        expect(ids(await listAll(store, orgA, filters))).toEqual([keyA.id]);
        expect(ids(await listAll(store, orgB, filters))).toEqual([keyB.id]);
      });

      it.each<PageCursor['direction']>(['after', 'before'])(
        "listApiKeys with an '%s' cursor of another organization's key finds no cursor",
        async (direction) => {
          for (const filters of [{}, { status: 'active' as const }, { workspaceId: 'wrkspc_shared' }]) {
            expect(
              await store.listApiKeys({ organizationId: orgA, limit: 10, cursor: { direction, id: keyB.id }, filters }),
            ).toEqual({ kind: 'cursor_not_found' });
          }
          expect(
            await store.listApiKeys({ organizationId: orgA, limit: 10, cursor: { direction, id: keyA.id } }),
          ).toEqual({ kind: 'page', keys: [], hasMore: false });
        },
      );
    });

    describe('transactions', () => {
      it('commits everything done through the given store and returns the result of the work', async () => {
        const organizationId = await newOrganization();

        const result = await store.transaction(async (trx) => {
          const created = await trx.createApiKey({
            organizationId,
            name: 'in a transaction',
            createdBy: { id: 'user_alice', type: 'user' },
          });
          expect(await trx.getApiKey(organizationId, created.apiKey.id)).toEqual(created.apiKey);
          return created.apiKey;
        });

        expect(await store.getApiKey(organizationId, result.id)).toEqual(result);
      });

      it('rolls back everything done through the given store when the work throws, and rethrows', async () => {
        const organizationId = await newOrganization();
        const { apiKey: existing } = await newKey(organizationId, { name: 'before' });
        const failure = new Error('abort the transaction');
        const made: { organizationId?: string; apiKeyId?: string; adminSecret?: string; apiSecret?: string } = {};

        const outcome = store.transaction(async (trx) => {
          made.organizationId = (await trx.createOrganization('rolled back')).id;
          const created = await trx.createApiKey({
            organizationId,
            name: 'rolled back',
            createdBy: { id: 'user_alice', type: 'user' },
          });
          made.apiKeyId = created.apiKey.id;
          made.apiSecret = created.secret;
          made.adminSecret = (await trx.createAdminKey({ organizationId, name: 'rolled back' })).secret;
          await trx.updateApiKey(organizationId, existing.id, { name: 'after', status: 'archived' });
          throw failure;
        });

        await expect(outcome).rejects.toBe(failure);
        expect(made.organizationId && (await store.getOrganization(made.organizationId))).toBeUndefined();
        expect(made.apiKeyId && (await store.getApiKey(organizationId, made.apiKeyId))).toBeUndefined();
        expect(await store.findCredential(hashSecret(made.apiSecret ?? ''))).toEqual({ kind: 'unknown' });
        expect(await store.findCredential(hashSecret(made.adminSecret ?? ''))).toEqual({ kind: 'unknown' });
        expect(await store.getApiKey(organizationId, existing.id)).toEqual(existing);
        expect(ids(await listAll(store, organizationId))).toEqual([existing.id]);
      });

      it('every read through the given store sees the transaction’s own writes', async () => {
        const organizationId = await newOrganization();
        const { apiKey: existing } = await newKey(organizationId, { name: 'before' });

        await store.transaction(async (trx) => {
          const created = await trx.createApiKey({
            organizationId,
            name: 'uncommitted',
            createdBy: { id: 'user_alice', type: 'user' },
          });
          const admin = await trx.createAdminKey({ organizationId, name: 'uncommitted' });
          const updated = await trx.updateApiKey(organizationId, existing.id, { name: 'after' });

          expect(await trx.getApiKey(organizationId, existing.id)).toEqual(updated);
          expect((await trx.findCredential(hashSecret(created.secret))).kind).toBe('api_key');
          expect((await trx.findCredential(hashSecret(admin.secret))).kind).toBe('admin_key');
          const page = await listPage(trx, { organizationId, limit: 10 });
          expect(page.keys).toEqual([created.apiKey, updated]);
          const after = await listPage(trx, {
            organizationId,
            limit: 10,
            cursor: { direction: 'after', id: created.apiKey.id },
          });
          expect(after.keys).toEqual([updated]);
        });
      });

      it('a read outside an open transaction never sees its uncommitted writes', async () => {
        const organizationId = await newOrganization();
        const { apiKey: existing } = await newKey(organizationId, { name: 'before' });
        const failure = new Error('abort the transaction');
        let outsideReads: Promise<unknown[]> | undefined;

        const outcome = store.transaction(async (trx) => {
          await trx.updateApiKey(organizationId, existing.id, { name: 'uncommitted' });
          // Started while the update is uncommitted; on SQLite's single connection they wait for the rollback.
          outsideReads = Promise.all([
            store.getApiKey(organizationId, existing.id),
            listPage(store, { organizationId, limit: 10 }).then((page) => page.keys[0]),
          ]);
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw failure;
        });

        await expect(outcome).rejects.toBe(failure);
        expect(await outsideReads).toEqual([existing, existing]);
      });

      it('an update outside an open transaction is not rolled back with it', async () => {
        const organizationId = await newOrganization();
        const { apiKey: inside } = await newKey(organizationId, { name: 'inside' });
        const { apiKey: outside } = await newKey(organizationId, { name: 'outside' });
        const failure = new Error('abort the transaction');
        let outsideUpdate: Promise<unknown> | undefined;

        const outcome = store.transaction(async (trx) => {
          await trx.updateApiKey(organizationId, inside.id, { name: 'rolled back' });
          outsideUpdate = store.updateApiKey(organizationId, outside.id, { name: 'committed' });
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw failure;
        });

        await expect(outcome).rejects.toBe(failure);
        expect((await outsideUpdate) as ApiKeyRecord).toMatchObject({ id: outside.id, name: 'committed' });
        expect((await store.getApiKey(organizationId, outside.id))?.name).toBe('committed');
        expect((await store.getApiKey(organizationId, inside.id))?.name).toBe('inside');
      });
    });

    describe('listing: the status filter at a given moment', () => {
      // An arbitrary moment, with keys whose expiry is an hour before it, exactly at it, or an hour after it.
      const T = 1_800_000_000_000_000;
      const EXPIRIES = [null, T - HOUR_MICROS, T, T + HOUR_MICROS];
      const MOMENTS = [T - 2 * HOUR_MICROS, T - 1, T, T + 2 * HOUR_MICROS];
      let organizationId: string;
      /** One key for every stored status and expiry, newest first. */
      let keys: ApiKeyRecord[];

      beforeAll(async () => {
        organizationId = await newOrganization('moments');
        for (const status of STATUSES) {
          for (const expiresAt of EXPIRIES) {
            await newKey(organizationId, { name: `${status} until ${expiresAt}`, status, expiresAt });
          }
        }
        keys = await listAll(store, organizationId);
      });

      /** Every non-empty set of effective statuses. */
      const STATUS_SETS = Array.from({ length: 2 ** EFFECTIVE_API_KEY_STATUSES.length - 1 }, (_, n) =>
        EFFECTIVE_API_KEY_STATUSES.filter((__, bit) => ((n + 1) >> bit) & 1),
      );

      it.each(STATUS_SETS.map((set) => [set.join(' or '), set] as const))(
        'a filter of %s lists the keys whose effective status is one of them, at every moment',
        async (_, statuses) => {
          for (const now of MOMENTS) {
            const listed = await listAll(store, organizationId, { status: statuses }, now);

            expect(ids(listed)).toEqual(ids(keys.filter((key) => matches(key, { status: statuses }, now))));
          }
        },
      );

      it('a single status as a string filters like a list of it', async () => {
        for (const status of EFFECTIVE_API_KEY_STATUSES) {
          expect(await listAll(store, organizationId, { status }, T)).toEqual(
            await listAll(store, organizationId, { status: [status] }, T),
          );
        }
      });

      it('a key expiring at T is active or inactive before T, expired from T on; archived stays archived', async () => {
        const expiring = keys.filter((key) => key.expiresAt === T);
        const statusesAt = async (now: EpochMicros) => {
          const found: Record<string, EffectiveApiKeyStatus> = {};
          for (const status of EFFECTIVE_API_KEY_STATUSES) {
            for (const key of await listAll(store, organizationId, { status }, now)) {
              found[key.id] = status;
            }
          }
          return expiring.map((key) => found[key.id]);
        };

        expect(expiring.map((key) => key.status)).toEqual(['archived', 'inactive', 'active']);
        expect(await statusesAt(T - 1)).toEqual(['archived', 'inactive', 'active']);
        expect(await statusesAt(T)).toEqual(['archived', 'expired', 'expired']);
      });

      it('without a moment the filter is evaluated now', async () => {
        const organization = await newOrganization('now');
        const { apiKey: past } = await newKey(organization, { expiresAt: nowMicros() - SECOND_MICROS });
        const { apiKey: future } = await newKey(organization, { expiresAt: nowMicros() + HOUR_MICROS });

        expect(ids(await listAll(store, organization, { status: 'expired' }))).toEqual([past.id]);
        expect(ids(await listAll(store, organization, { status: 'active' }))).toEqual([future.id]);
      });

      it.each<[string, unknown]>([
        ['an empty list', []],
        ['an unknown status', 'bogus'],
        ['a list with an unknown status', ['active', 'bogus']],
      ])('a status filter with %s is a TypeError', async (_, status) => {
        await expect(
          store.listApiKeys({ organizationId, limit: 10, filters: { status: status as EffectiveApiKeyStatus } }),
        ).rejects.toThrow(TypeError);
      });

      it("a null workspace filter lists the default workspace's keys, never one with organization scope", async () => {
        const organizationId = await newOrganization('default workspace filter');
        const { apiKey: inDefault } = await newKey(organizationId);
        const { apiKey: bound } = await newKey(organizationId, { workspaceId: null, principal: ALICE });
        await newKey(organizationId, { scope: 'organization', principal: ALICE });
        await newKey(organizationId, { workspaceId: 'wrkspc_other' });

        expect(await listAll(store, organizationId, { workspaceId: null })).toEqual([bound, inDefault]);
      });

      it('a workspace ID filter lists the keys stored with that ID, never those of the default workspace', async () => {
        const organization = await store.createOrganization('workspace ID filter');
        const { apiKey: named } = await newKey(organization.id, { workspaceId: 'wrkspc_named' });
        const { apiKey: withDefaultId } = await newKey(organization.id, {
          workspaceId: organization.defaultWorkspaceId,
        });
        const { apiKey: inDefault } = await newKey(organization.id);
        await newKey(organization.id, { scope: 'organization', principal: ALICE });

        expect(await listAll(store, organization.id, { workspaceId: 'wrkspc_named' })).toEqual([named]);
        // The store takes the default workspace's ID as any other ID; the server maps it to null before it calls.
        expect(await listAll(store, organization.id, { workspaceId: organization.defaultWorkspaceId })).toEqual([
          withDefaultId,
        ]);
        expect(await listAll(store, organization.id, { workspaceId: null })).toEqual([inDefault]);
      });
    });

    describe('rotating API keys', () => {
      const rotate = (organizationId: string, id: string, gracePeriodMicros: EpochMicros) =>
        store.rotateApiKey({ organizationId, id, gracePeriodMicros, createdBy: ROTATOR });
      /** Rotates a key that must be rotatable. */
      const rotated = async (organizationId: string, id: string, gracePeriodMicros: EpochMicros) => {
        const result = await rotate(organizationId, id, gracePeriodMicros);
        if (result.kind !== 'rotated') {
          throw new Error(`the rotation of ${id} found it ${result.kind}`);
        }
        return result;
      };

      it('creates a key like the old one, active, by the rotator, with a new ID and a secret that works', async () => {
        const organizationId = await newOrganization();
        const expiresAt = nowMicros() + 24 * HOUR_MICROS;
        const { apiKey: old, secret: oldSecret } = await newKey(organizationId, {
          name: 'rotate me',
          workspaceId: 'wrkspc_01',
          principal: ALICE,
          expiresAt,
          status: 'inactive',
          permissions: ['documents.read', 'billing.*'],
          metadata: { owner: 'team-a', limits: { daily: 10 } },
        });

        const { created } = await rotated(organizationId, old.id, HOUR_MICROS);

        expect(created.apiKey).toEqual({
          id: expect.stringMatching(/^apikey_[A-Za-z0-9]{24}$/),
          name: 'rotate me',
          workspaceId: 'wrkspc_01',
          scope: 'workspace',
          createdAt: expect.any(Number),
          createdBy: ROTATOR,
          partialKeyHint: expectedHint(created.secret),
          status: 'active',
          expiresAt,
          principal: ALICE,
          lastUsedAt: null,
          permissions: ['documents.read', 'billing.*'],
          metadata: { owner: 'team-a', limits: { daily: 10 } },
        });
        expect(created.apiKey.id).not.toBe(old.id);
        expect(created.secret).toMatch(API_SECRET);
        expect(created.secret).not.toBe(oldSecret);
        expect(created.apiKey.createdAt).toBeGreaterThan(old.createdAt);
        expect(await store.getApiKey(organizationId, created.apiKey.id)).toEqual(created.apiKey);
        expect(await store.findCredential(hashSecret(created.secret))).toEqual({ kind: 'api_key', organizationId });
        expect(ids(await listAll(store, organizationId))).toEqual([created.apiKey.id, old.id]);
      });

      it('with no grace period the old key expires at the moment of the rotation', async () => {
        const organizationId = await newOrganization();
        const { apiKey: old } = await newKey(organizationId);

        const { previous, rotatedAt: now } = await rotated(organizationId, old.id, 0);

        expect(previous).toEqual({ ...old, expiresAt: now });
        expect(await store.getApiKey(organizationId, old.id)).toEqual(previous);
        expect(ids(await listAll(store, organizationId, { status: 'expired' }, now))).toEqual([old.id]);
      });

      it('with a grace period the old key keeps working until it ends', async () => {
        const organizationId = await newOrganization();
        const { apiKey: old } = await newKey(organizationId);

        const { created, previous, rotatedAt: now } = await rotated(organizationId, old.id, HOUR_MICROS);
        const activeAt = async (moment: EpochMicros) =>
          ids(await listAll(store, organizationId, { status: 'active' }, moment));

        expect(previous).toEqual({ ...old, expiresAt: now + HOUR_MICROS });
        expect(created.apiKey.expiresAt).toBeNull();
        expect(await activeAt(now + HOUR_MICROS - 1)).toEqual([created.apiKey.id, old.id]);
        expect(await activeAt(now + HOUR_MICROS)).toEqual([created.apiKey.id]);
      });

      it('an old key expiring before the grace period ends keeps its expiry; the new key gets it too', async () => {
        const organizationId = await newOrganization();
        const now = nowMicros();
        const { apiKey: old } = await newKey(organizationId, { expiresAt: now + 10 * SECOND_MICROS });

        const { created, previous } = await rotated(organizationId, old.id, HOUR_MICROS);

        expect(previous).toEqual(old);
        expect(created.apiKey.expiresAt).toBe(now + 10 * SECOND_MICROS);
      });

      it('an old key expiring after the grace period expires at its end; the new key keeps its expiry', async () => {
        const organizationId = await newOrganization();
        const now = nowMicros();
        const { apiKey: old } = await newKey(organizationId, { expiresAt: now + 24 * HOUR_MICROS });

        const { created, previous, rotatedAt } = await rotated(organizationId, old.id, HOUR_MICROS);

        expect(previous.expiresAt).toBe(rotatedAt + HOUR_MICROS);
        expect(created.apiKey.expiresAt).toBe(now + 24 * HOUR_MICROS);
      });

      it('a key with organization scope is replaced by one with the same scope and principal', async () => {
        const organizationId = await newOrganization();
        const { apiKey: old } = await newKey(organizationId, { scope: 'organization', principal: ALICE });

        const { created } = await rotated(organizationId, old.id, 0);

        expect(created.apiKey).toMatchObject({ workspaceId: null, scope: 'organization', principal: ALICE });
      });

      it('a key of the default workspace is replaced by one of the default workspace', async () => {
        const organizationId = await newOrganization();
        const { apiKey: old } = await newKey(organizationId, { principal: ALICE });

        const { created } = await rotated(organizationId, old.id, 0);

        expect(created.apiKey).toMatchObject({ workspaceId: null, scope: 'workspace', principal: ALICE });
        expect(ids(await listAll(store, organizationId, { workspaceId: null }))).toEqual([created.apiKey.id, old.id]);
      });

      it('a key of another organization, or an unknown ID, is not found, and nothing changes', async () => {
        const [orgA, orgB] = [await newOrganization('A'), await newOrganization('B')];
        const { apiKey: keyB } = await newKey(orgB);

        expect(await rotate(orgA, keyB.id, 0)).toEqual({ kind: 'not_found' });
        expect(await rotate(orgA, UNKNOWN_ID, 0)).toEqual({ kind: 'not_found' });

        expect(await listAll(store, orgA)).toEqual([]);
        expect(await listAll(store, orgB)).toEqual([keyB]);
      });

      it.each<[string, Partial<Parameters<Store['createApiKey']>[0]>, 'archived' | 'expired']>([
        ['archived', { status: 'archived' }, 'archived'],
        ['archived, with an expiry that has passed', { status: 'archived', expiresAt: 1 }, 'archived'],
        ['expired', { expiresAt: 1 }, 'expired'],
        ['inactive and expired', { status: 'inactive', expiresAt: 1 }, 'expired'],
      ])('a key that is %s is not rotatable, and nothing changes', async (_, overrides, status) => {
        const organizationId = await newOrganization();
        const { apiKey: key } = await newKey(organizationId, overrides);

        expect(await rotate(organizationId, key.id, HOUR_MICROS)).toEqual({ kind: 'not_rotatable', key, status });

        expect(await listAll(store, organizationId)).toEqual([key]);
      });

      it('the moment of the rotation, read by the store, decides whether the key has expired', async () => {
        const organizationId = await newOrganization();
        // A second apart from now: PostgreSQL reads its own clock.
        const { apiKey: expired } = await newKey(organizationId, { expiresAt: nowMicros() - SECOND_MICROS });
        const { apiKey: expiring } = await newKey(organizationId, { expiresAt: nowMicros() + SECOND_MICROS });

        expect(await rotate(organizationId, expired.id, 0)).toEqual({
          kind: 'not_rotatable',
          key: expired,
          status: 'expired',
        });
        const { rotatedAt, previous } = await rotated(organizationId, expiring.id, 0);
        expect(previous.expiresAt).toBe(rotatedAt);
      });

      it('a rotation that waited for a rotation without grace period finds the key expired', async () => {
        const organizationId = await newOrganization();
        const { apiKey } = await newKey(organizationId);
        let second: Promise<Awaited<ReturnType<Store['rotateApiKey']>>> | undefined;

        await store.transaction(async (trx) => {
          expect(
            (await trx.rotateApiKey({ organizationId, id: apiKey.id, gracePeriodMicros: 0, createdBy: ROTATOR })).kind,
          ).toBe('rotated');
          second = rotate(organizationId, apiKey.id, 0);
          await new Promise((resolve) => setTimeout(resolve, 50));
        });

        expect(await second).toMatchObject({ kind: 'not_rotatable', status: 'expired' });
        expect(await listAll(store, organizationId)).toHaveLength(2);
      });

      it('of two rotations of one key at the same time, one rotates it and the other finds it expired', async () => {
        const organizationId = await newOrganization();
        const { apiKey: key } = await newKey(organizationId);

        const results = await Promise.all([rotate(organizationId, key.id, 0), rotate(organizationId, key.id, 0)]);

        expect(results.map((result) => result.kind).sort()).toEqual(['not_rotatable', 'rotated']);
        expect(results.find((result) => result.kind === 'not_rotatable')).toMatchObject({ status: 'expired' });
        expect(await listAll(store, organizationId)).toHaveLength(2);
      });

      it('a rotation in a transaction that fails is undone with it', async () => {
        const organizationId = await newOrganization();
        const { apiKey: key } = await newKey(organizationId);
        const failure = new Error('abort the transaction');
        let secret = '';

        const outcome = store.transaction(async (trx) => {
          const result = await trx.rotateApiKey({
            organizationId,
            id: key.id,
            gracePeriodMicros: 0,
            createdBy: ROTATOR,
          });
          secret = result.kind === 'rotated' ? result.created.secret : '';
          throw failure;
        });

        await expect(outcome).rejects.toBe(failure);
        expect(secret).toMatch(API_SECRET);
        expect(await listAll(store, organizationId)).toEqual([key]);
        expect(await store.findCredential(hashSecret(secret))).toEqual({ kind: 'unknown' });
      });

      it.each([-1, 0.5, Number.NaN])('a grace period of %s is a TypeError', async (gracePeriodMicros) => {
        const organizationId = await newOrganization();
        const { apiKey: key } = await newKey(organizationId);

        await expect(rotate(organizationId, key.id, gracePeriodMicros)).rejects.toThrow(TypeError);
        expect(await listAll(store, organizationId)).toEqual([key]);
      });
    });

    describe('listing: boundaries', () => {
      it('an organization without keys lists an empty last page, with or without filters', async () => {
        const organizationId = await newOrganization();

        expect(await store.listApiKeys({ organizationId, limit: 10 })).toEqual({
          kind: 'page',
          keys: [],
          hasMore: false,
        });
        expect(await store.listApiKeys({ organizationId, limit: 1, filters: { status: 'active' } })).toEqual({
          kind: 'page',
          keys: [],
          hasMore: false,
        });
      });

      it('without attributes, lists the same keys in the same pages, each without its permissions and metadata', async () => {
        const organizationId = await newOrganization();
        await newKey(organizationId, { name: 'plain' });
        await newKey(organizationId, { name: 'holder', permissions: ['documents.read'], metadata: { plan: 'pro' } });
        await newKey(organizationId, { name: 'archived', status: 'archived', permissions: ['*'] });
        const minute = 60_000_000;
        const [first] = (await listPage(store, { organizationId, limit: 1 })).keys;
        await store.recordKeyUsage([{ id: first?.id ?? '', organizationId, lastUsedAt: 100 * minute }]);

        for (const query of [
          { organizationId, limit: 2 },
          { organizationId, limit: 2, cursor: { direction: 'after' as const, id: first?.id ?? '' } },
          { organizationId, limit: 5, filters: { status: 'active' as const } },
        ]) {
          const full = await listPage(store, query);
          const bare = await listPage(store, { ...query, attributes: false });

          expect(bare.hasMore).toBe(full.hasMore);
          expect(bare.keys).toEqual(full.keys.map(({ permissions: _p, metadata: _m, ...key }) => key));
        }
        const holder = (await listPage(store, { organizationId, limit: 5 })).keys.find((key) => key.name === 'holder');
        expect(holder).toMatchObject({ permissions: ['documents.read'], metadata: { plan: 'pro' } });
        expect(first?.lastUsedAt).toBeNull();
        expect((await listPage(store, { organizationId, limit: 1, attributes: false })).keys[0]?.lastUsedAt).toBe(
          100 * minute,
        );
      });

      it('a cursor naming no key of the organization finds no cursor in both directions', async () => {
        const organizationId = await newOrganization();
        await newKey(organizationId);

        for (const direction of ['after', 'before'] as const) {
          expect(await store.listApiKeys({ organizationId, limit: 10, cursor: { direction, id: UNKNOWN_ID } })).toEqual(
            { kind: 'cursor_not_found' },
          );
          expect(
            await store.listApiKeys({
              organizationId,
              limit: 10,
              cursor: { direction, id: UNKNOWN_ID },
              filters: { status: 'active' },
            }),
          ).toEqual({ kind: 'cursor_not_found' });
        }
      });
    });

    describe('listing: seeded keys', () => {
      let orgA: string;
      let orgB: string;
      /** Every key of organization A, newest first, from one large page. */
      let all: ApiKeyRecord[];
      let otherIds: string[];
      /** The named workspaces of the seeded keys (not the default one). */
      let workspaces: string[];
      let users: string[];

      beforeAll(async () => {
        orgA = await newOrganization('seeded A');
        orgB = await newOrganization('seeded B');
        expect(
          await seedApiKeys(store, {
            organizationId: orgA,
            count: SEED_COUNT,
            workspaces: 3,
            users: 4,
            seed: 7,
            lifecycle: true,
          }),
        ).toBe(SEED_COUNT);
        // The other organization gets keys with the same workspaces, users and statuses, so filters alone never
        // tell the organizations apart.
        await seedApiKeys(store, {
          organizationId: orgB,
          count: OTHER_ORG_SEED_COUNT,
          workspaces: 3,
          users: 4,
          seed: 8,
          lifecycle: true,
        });
        const seeded = await listAll(store, orgA);
        workspaces = [...new Set(seeded.map((key) => key.workspaceId))].filter((id) => id !== null).sort();
        users = [...new Set(seeded.map((key) => key.createdBy.id))].sort();
        // A service account whose id equals a user's: createdByUserId must not match it.
        await store.createApiKey({
          organizationId: orgA,
          name: 'service account named like a user',
          workspaceId: at(workspaces, 0),
          createdBy: { id: at(users, 0), type: 'service_account' },
          status: 'inactive',
        });
        await store.createApiKey({
          organizationId: orgA,
          name: 'no workspace',
          createdBy: { id: at(users, 1), type: 'user' },
        });
        all = await listAll(store, orgA);
        otherIds = ids(await listAll(store, orgB));
      });

      it('seedApiKeys spreads keys over the statuses, K workspaces and the default, U users and times', async () => {
        const seeded = all.filter((key) => key.name.startsWith('seeded'));

        expect(seeded).toHaveLength(SEED_COUNT);
        expect(new Set(seeded.map((key) => key.status))).toEqual(new Set(STATUSES));
        expect(workspaces).toEqual(['wrkspc_seed0', 'wrkspc_seed1', 'wrkspc_seed2']);
        // The named workspaces, and null: the default workspace, or none with organization scope.
        expect(new Set(seeded.map((key) => key.workspaceId)).size).toBe(3 + 1);
        expect(seeded.filter((key) => matches(key, { workspaceId: null })).length).toBeGreaterThan(SEED_COUNT / 8);
        expect(new Set(seeded.map((key) => key.createdBy.id)).size).toBe(4);
        expect(seeded.every((key) => key.createdBy.type === 'user')).toBe(true);
        expect(new Set(seeded.map((key) => key.createdAt)).size).toBe(SEED_COUNT);
        expect(seeded.filter((key) => !Number.isSafeInteger(key.createdAt))).toEqual([]);
        expect(seeded.filter((key) => !SEEDED_HINT.test(key.partialKeyHint ?? ''))).toEqual([]);
        expect(otherIds).toHaveLength(OTHER_ORG_SEED_COUNT);
      });

      it('seedApiKeys expires about 3% of keys already and 10% later, and binds about 2% to their creator', () => {
        const now = nowMicros();
        const seeded = all.filter((key) => key.name.startsWith('seeded'));
        const shareOf = (predicate: (key: ApiKeyRecord) => boolean) => seeded.filter(predicate).length / SEED_COUNT;
        const expired = (key: ApiKeyRecord) => key.expiresAt != null && key.expiresAt <= now;
        const expiring = (key: ApiKeyRecord) => key.expiresAt != null && key.expiresAt > now;
        const bound = seeded.filter((key) => key.principal);

        expect(shareOf(expired)).toBeGreaterThan(0.015);
        expect(shareOf(expired)).toBeLessThan(0.045);
        expect(shareOf(expiring)).toBeGreaterThan(0.08);
        expect(shareOf(expiring)).toBeLessThan(0.12);
        expect(bound.length / SEED_COUNT).toBeGreaterThan(0.01);
        expect(bound.length / SEED_COUNT).toBeLessThan(0.03);
        // An expiry lies after the key's creation; a later one at least a day after seeding.
        expect(seeded.filter((key) => expired(key) && (key.expiresAt ?? 0) < key.createdAt)).toEqual([]);
        expect(seeded.filter((key) => expiring(key) && (key.expiresAt ?? 0) < now + 23 * HOUR_MICROS)).toEqual([]);
        expect(bound.filter((key) => key.principal?.type !== 'user' || key.principal.id !== key.createdBy.id)).toEqual(
          [],
        );
        // About half of the bound keys have organization scope, and only they do; they have no workspace.
        const organizationScope = seeded.filter((key) => key.scope === 'organization');
        expect(organizationScope.length).toBeGreaterThan(bound.length / 4);
        expect(organizationScope.length).toBeLessThan((bound.length * 3) / 4);
        expect(organizationScope.filter((key) => !key.principal || key.workspaceId !== null)).toEqual([]);
        expect(seeded.filter((key) => key.scope !== 'organization' && key.scope !== 'workspace')).toEqual([]);
      });

      it('seedApiKeys with the same seed makes the same spread', async () => {
        const organization = await store.createOrganization('same seed');
        await seedApiKeys(store, {
          organizationId: organization.id,
          count: SEED_COUNT,
          workspaces: 3,
          users: 4,
          seed: 7,
          lifecycle: true,
        });
        const now = nowMicros();
        const spreadOf = (keys: ApiKeyRecord[]) =>
          keys
            .filter((key) => key.name.startsWith('seeded'))
            .map((key) => [
              key.name,
              key.status,
              key.workspaceId,
              key.scope,
              key.createdBy.id,
              key.expiresAt == null ? 'never' : key.expiresAt <= now ? 'expired' : 'later',
              key.principal?.id ?? null,
            ]);

        expect(spreadOf(await listAll(store, organization.id))).toEqual(spreadOf(all));
      });

      it('seedApiKeys of more keys than one transaction holds creates every one of them, once', async () => {
        const organizationId = await newOrganization('large seed');

        const created = await seedApiKeys(store, {
          organizationId,
          count: LARGE_SEED_COUNT,
          workspaces: 2,
          users: 2,
          seed: 9,
          lifecycle: true,
        });
        const listed = await listAll(store, organizationId);

        expect(created).toBe(LARGE_SEED_COUNT);
        expect(listed).toHaveLength(LARGE_SEED_COUNT);
        expect(new Set(ids(listed)).size).toBe(LARGE_SEED_COUNT);
        expect(new Set(listed.map((key) => key.name)).size).toBe(LARGE_SEED_COUNT);
      });

      it('lists every key of the organization exactly once, newest first, and none of another organization', () => {
        expect(all).toHaveLength(SEED_COUNT + 2);
        expect(new Set(ids(all)).size).toBe(all.length);
        expect([...all].sort(newestFirst)).toEqual(all);
        const otherSet = new Set(otherIds);
        expect(all.filter((key) => otherSet.has(key.id))).toEqual([]);
      });

      const filterCases: [string, () => ApiKeyFilters][] = [
        ['no filter', () => ({})],
        ['status', () => ({ status: 'inactive' })],
        ['workspaceId', () => ({ workspaceId: at(workspaces, 0) })],
        ['createdByUserId', () => ({ createdByUserId: at(users, 0) })],
        ['status + workspaceId', () => ({ status: 'active', workspaceId: at(workspaces, 1) })],
        ['status + createdByUserId', () => ({ status: 'archived', createdByUserId: at(users, 1) })],
        ['workspaceId + createdByUserId', () => ({ workspaceId: at(workspaces, 0), createdByUserId: at(users, 0) })],
        [
          'all three filters',
          () => ({ status: 'inactive', workspaceId: at(workspaces, 0), createdByUserId: at(users, 0) }),
        ],
        ['the default workspace', () => ({ workspaceId: null })],
        ['status + the default workspace', () => ({ status: 'active', workspaceId: null })],
        ['the default workspace + createdByUserId', () => ({ workspaceId: null, createdByUserId: at(users, 2) })],
        ['expired + the default workspace', () => ({ status: 'expired', workspaceId: null })],
        ['expired', () => ({ status: 'expired' })],
        ['inactive or expired', () => ({ status: ['inactive', 'expired'] })],
        ['active or inactive', () => ({ status: ['active', 'inactive'] })],
        ['expired + workspaceId', () => ({ status: 'expired', workspaceId: at(workspaces, 1) })],
        ['expired + createdByUserId', () => ({ status: 'expired', createdByUserId: at(users, 2) })],
        [
          'archived or expired + workspaceId + createdByUserId',
          () => ({ status: ['archived', 'expired'], workspaceId: at(workspaces, 2), createdByUserId: at(users, 3) }),
        ],
      ];

      describe.each(filterCases)('with %s', (_, filtersOf) => {
        it('a single large page returns exactly the matching keys in order', async () => {
          const filters = filtersOf();
          const expected = all.filter((key) => matches(key, filters));

          const listed = await listAll(store, orgA, filters);

          expect(expected.length).toBeGreaterThan(0);
          expect(ids(listed)).toEqual(ids(expected));
        });

        it.each(PAGE_SIZES)(
          'walks with page size %i visit every matching key once, in order, both ways',
          async (limit) => {
            const filters = filtersOf();
            const expected = all.filter((key) => matches(key, filters));

            await expectWalksInBothDirections(store, orgA, limit, filters, expected);
          },
        );
      });

      it('the createdByUserId filter does not match a service account with the same id', async () => {
        const listed = await listAll(store, orgA, { createdByUserId: at(users, 0) });

        expect(listed.length).toBeGreaterThan(0);
        expect(listed.every((key) => key.createdBy.type === 'user')).toBe(true);
        expect(all.some((key) => key.createdBy.type === 'service_account')).toBe(true);
      });

      it('a filter nobody matches returns an empty last page', async () => {
        expect(
          await store.listApiKeys({ organizationId: orgA, limit: 10, filters: { workspaceId: 'wrkspc_none' } }),
        ).toEqual({ kind: 'page', keys: [], hasMore: false });
      });

      it('limit 1 returns the newest key and says there are more', async () => {
        expect(await store.listApiKeys({ organizationId: orgA, limit: 1 })).toEqual({
          kind: 'page',
          keys: [at(all, 0)],
          hasMore: true,
        });
      });

      it('limit 1000 returns the newest 1000 keys, and the page after them continues the order', async () => {
        const first = await listPage(store, { organizationId: orgA, limit: 1000 });
        const second = await listPage(store, {
          organizationId: orgA,
          limit: 1000,
          cursor: { direction: 'after', id: at(first.keys, -1).id },
        });
        const third = await listPage(store, {
          organizationId: orgA,
          limit: 1000,
          cursor: { direction: 'after', id: at(second.keys, -1).id },
        });

        expect(first).toEqual({ kind: 'page', keys: all.slice(0, 1000), hasMore: true });
        expect(second).toEqual({ kind: 'page', keys: all.slice(1000, 2000), hasMore: true });
        expect(third).toEqual({ kind: 'page', keys: all.slice(2000), hasMore: false });
      });

      it('a limit equal to the number of matching keys says no more; one less says more', async () => {
        const filters = { status: 'archived', createdByUserId: at(users, 2) } as const;
        const expected = all.filter((key) => matches(key, filters));

        expect(await store.listApiKeys({ organizationId: orgA, limit: expected.length, filters })).toEqual({
          kind: 'page',
          keys: expected,
          hasMore: false,
        });
        expect(await store.listApiKeys({ organizationId: orgA, limit: expected.length - 1, filters })).toEqual({
          kind: 'page',
          keys: expected.slice(0, -1),
          hasMore: true,
        });
      });

      it('after the oldest key and before the newest key are empty last pages', async () => {
        const oldest = at(all, -1).id;
        const newest = at(all, 0).id;

        expect(
          await store.listApiKeys({ organizationId: orgA, limit: 5, cursor: { direction: 'after', id: oldest } }),
        ).toEqual({ kind: 'page', keys: [], hasMore: false });
        expect(
          await store.listApiKeys({ organizationId: orgA, limit: 5, cursor: { direction: 'before', id: newest } }),
        ).toEqual({ kind: 'page', keys: [], hasMore: false });
      });

      it('hasMore is exact at the ends: the last full page in each direction says no more', async () => {
        const n = all.length;
        const limit = 10;

        const lastAfter = await listPage(store, {
          organizationId: orgA,
          limit,
          cursor: { direction: 'after', id: at(all, n - 1 - limit).id },
        });
        const almostLastAfter = await listPage(store, {
          organizationId: orgA,
          limit,
          cursor: { direction: 'after', id: at(all, n - 2 - limit).id },
        });
        const lastBefore = await listPage(store, {
          organizationId: orgA,
          limit,
          cursor: { direction: 'before', id: at(all, limit).id },
        });
        const almostLastBefore = await listPage(store, {
          organizationId: orgA,
          limit,
          cursor: { direction: 'before', id: at(all, limit + 1).id },
        });
        const shortBefore = await listPage(store, {
          organizationId: orgA,
          limit,
          cursor: { direction: 'before', id: at(all, 3).id },
        });

        expect(lastAfter).toEqual({ kind: 'page', keys: all.slice(n - limit), hasMore: false });
        expect(almostLastAfter).toEqual({ kind: 'page', keys: all.slice(n - 1 - limit, n - 1), hasMore: true });
        expect(lastBefore).toEqual({ kind: 'page', keys: all.slice(0, limit), hasMore: false });
        expect(almostLastBefore).toEqual({ kind: 'page', keys: all.slice(1, limit + 1), hasMore: true });
        expect(shortBefore).toEqual({ kind: 'page', keys: all.slice(0, 3), hasMore: false });
      });

      it("a cursor key that does not match the filters positions the page by the key's created_at and id", async () => {
        const filters = { status: 'active' } as const;
        const index = all.findIndex((key, i) => i > 500 && i < all.length - 500 && key.status !== 'active');
        const cursorKey = at(all, index);
        const limit = 25;

        const after = await store.listApiKeys({
          organizationId: orgA,
          limit,
          cursor: { direction: 'after', id: cursorKey.id },
          filters,
        });
        const before = await store.listApiKeys({
          organizationId: orgA,
          limit,
          cursor: { direction: 'before', id: cursorKey.id },
          filters,
        });

        expect(after).toEqual({
          kind: 'page',
          keys: all
            .slice(index + 1)
            .filter((key) => matches(key, filters))
            .slice(0, limit),
          hasMore: true,
        });
        expect(before).toEqual({
          kind: 'page',
          keys: all
            .slice(0, index)
            .filter((key) => matches(key, filters))
            .slice(-limit),
          hasMore: true,
        });
      });

      it.each<PageCursor['direction']>(['after', 'before'])(
        "an '%s' cursor naming a key of another organization finds no cursor, with or without filters",
        async (direction) => {
          const foreign = at(otherIds, 100);
          for (const [, filtersOf] of filterCases) {
            expect(
              await store.listApiKeys({
                organizationId: orgA,
                limit: 10,
                cursor: { direction, id: foreign },
                filters: filtersOf(),
              }),
            ).toEqual({ kind: 'cursor_not_found' });
          }
          expect(
            await store.listApiKeys({ organizationId: orgA, limit: 10, cursor: { direction, id: at(all, 100).id } }),
          ).toEqual({
            kind: 'page',
            keys: direction === 'after' ? all.slice(101, 111) : all.slice(90, 100),
            hasMore: true,
          });
        },
      );
    });

    // Registered only where the factory can write equal timestamps, so no run reports these tests as skipped.
    if (options.equalTimestamps) {
      describe('listing: equal created_at and microsecond precision', () => {
        // 2024-10-30T23:58:27.427722Z and one microsecond earlier.
        const T1 = 1_730_332_707_427_722;
        const T2 = T1 - 1;
        let organizationId: string;
        let all: ApiKeyRecord[];
        let tied: string[];

        beforeAll(async () => {
          if (!subject.setCreatedAt) {
            throw new Error(`${name}: equalTimestamps is set, but the factory gives no setCreatedAt`);
          }
          organizationId = await newOrganization('ties');
          const created: ApiKeyRecord[] = [];
          for (let i = 0; i < 14; i++) {
            created.push((await newKey(organizationId, { status: i % 2 === 0 ? 'active' : 'inactive' })).apiKey);
          }
          tied = ids(created.slice(0, 6));
          await subject.setCreatedAt(tied, T1);
          await subject.setCreatedAt(ids(created.slice(6, 11)), T2);
          all = await listAll(store, organizationId);
        });

        it('keeps microseconds exactly and orders equal created_at by id descending', () => {
          const tiedKeys = all.filter((key) => tied.includes(key.id));
          expect(tiedKeys.map((key) => key.createdAt)).toEqual(Array(6).fill(T1));
          expect(all.filter((key) => key.createdAt === T2)).toHaveLength(5);
          expect(ids(tiedKeys)).toEqual([...tied].sort().reverse());
          expect([...all].sort(newestFirst)).toEqual(all);
          // The three keys left at their creation time are newer than both tied groups.
          expect(all.slice(0, 3).every((key) => key.createdAt > T1)).toBe(true);
        });

        it.for([1, 2, 4, 5])('walks with page size %i through equal created_at in both directions', async (limit) => {
          await expectWalksInBothDirections(store, organizationId, limit, {}, all);
          const active = all.filter((key) => key.status === 'active');
          await expectWalksInBothDirections(store, organizationId, limit, { status: 'active' }, active);
        });

        it('a cursor inside a group of equal created_at returns the keys on its side of it', async () => {
          // Three newer keys, then the tied group of six in id order: its third key sits at index 5.
          const cursorId = at([...tied].sort().reverse(), 2);
          expect(all.findIndex((key) => key.id === cursorId)).toBe(5);

          expect(
            await store.listApiKeys({ organizationId, limit: 2, cursor: { direction: 'after', id: cursorId } }),
          ).toEqual({
            kind: 'page',
            keys: all.slice(6, 8),
            hasMore: true,
          });
          expect(
            await store.listApiKeys({ organizationId, limit: 2, cursor: { direction: 'before', id: cursorId } }),
          ).toEqual({ kind: 'page', keys: all.slice(3, 5), hasMore: true });
          expect(
            await store.listApiKeys({ organizationId, limit: 5, cursor: { direction: 'before', id: cursorId } }),
          ).toEqual({ kind: 'page', keys: all.slice(0, 5), hasMore: false });
        });
      });
    }
  });
}
