import {
  type ApiKeyRecord,
  type ChangeContext,
  DEFAULT_ORGANIZATION,
  nowMicros,
  openSqliteStore,
  SQLITE_MEMORY,
  type Store,
} from '@apikeys/store';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiKeysService } from '../../src/domain/api-keys-service.js';
import { AppError } from '../../src/domain/errors.js';

const ORG = DEFAULT_ORGANIZATION.id;
const MISSING = 'apikey_000000000000000000000000';
const CHANGES: ChangeContext = { actor: { type: 'admin_key', id: 'adminkey_test' } };

/** Runs `action` and returns the AppError it throws; fails the test if it throws nothing or something else. */
async function appErrorOf(action: () => Promise<unknown>): Promise<AppError> {
  const error = await action().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('ApiKeysService', () => {
  let store: Store;
  let service: ApiKeysService;
  let keys: ApiKeyRecord[];
  let foreign: ApiKeyRecord;
  let foreignOrganization: string;

  beforeEach(async () => {
    const opened = openSqliteStore(SQLITE_MEMORY);
    store = opened.store;
    await opened.migrator.migrateToLatest();
    service = new ApiKeysService(store);
    keys = [];
    for (const [name, status] of [
      ['first', 'active'],
      ['second', 'inactive'],
      ['third', 'archived'],
    ] as const) {
      const { apiKey } = await store.createApiKey({
        organizationId: ORG,
        name,
        workspaceId: 'wrkspc_unit',
        createdBy: { id: 'user_unit', type: 'user' },
        status,
      });
      keys.push(apiKey);
    }
    foreignOrganization = (await store.createOrganization('other')).id;
    const created = await store.createApiKey({
      organizationId: foreignOrganization,
      name: 'foreign',
      createdBy: { id: 'user_unit', type: 'user' },
    });
    foreign = created.apiKey;
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await store.close();
  });

  const key = (index: number): ApiKeyRecord => {
    const found = keys[index];
    if (!found) {
      throw new Error(`no fixture key ${index}`);
    }
    return found;
  };

  describe('listApiKeys', () => {
    it('refuses both cursors at once with an invalid_request_error naming both parameters', async () => {
      const error = await appErrorOf(() =>
        service.listApiKeys(ORG, {
          limit: 10,
          beforeId: key(0).id,
          afterId: key(2).id,
          filters: {},
          now: nowMicros(),
          attributes: true,
        }),
      );

      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toMatch(/^before_id: /);
      expect(error.message).toMatch(/after_id/);
    });

    it.each([
      ['afterId', 'after_id'],
      ['beforeId', 'before_id'],
    ] as const)('refuses an unknown %s with a message that starts with %s', async (field, parameter) => {
      const error = await appErrorOf(() =>
        service.listApiKeys(ORG, { limit: 10, [field]: MISSING, filters: {}, now: nowMicros(), attributes: true }),
      );

      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toBe(`${parameter}: no API key with ID ${MISSING}`);
    });

    it("refuses another organization's key as a cursor like an unknown one", async () => {
      const error = await appErrorOf(() =>
        service.listApiKeys(ORG, { limit: 10, afterId: foreign.id, filters: {}, now: nowMicros(), attributes: true }),
      );

      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toBe(`after_id: no API key with ID ${foreign.id}`);
    });

    it('returns a page newest first, saying whether more keys lie beyond it', async () => {
      const page = await service.listApiKeys(ORG, { limit: 2, filters: {}, now: nowMicros(), attributes: true });

      expect(page).toEqual({ keys: [key(2), key(1)], hasMore: true });
    });

    it('pages on from a cursor, and says when no key is left', async () => {
      const page = await service.listApiKeys(ORG, {
        limit: 2,
        afterId: key(1).id,
        filters: {},
        now: nowMicros(),
        attributes: true,
      });

      expect(page).toEqual({ keys: [key(0)], hasMore: false });
    });

    it('returns an empty last page when no key matches', async () => {
      const page = await service.listApiKeys(ORG, {
        limit: 5,
        filters: { workspaceId: 'wrkspc_none' },
        now: nowMicros(),
        attributes: true,
      });

      expect(page).toEqual({ keys: [], hasMore: false });
    });
  });

  describe('getApiKey', () => {
    it('returns the key of the organization', async () => {
      expect(await service.getApiKey(ORG, key(0).id)).toEqual(key(0));
    });

    it.each([
      ['an unknown key', () => MISSING],
      ["another organization's key", () => foreign.id],
    ])('answers %s with not_found_error naming api_key_id', async (_label, id) => {
      const error = await appErrorOf(() => service.getApiKey(ORG, id()));

      expect(error.type).toBe('not_found_error');
      expect(error.message).toBe(`api_key_id: no API key with ID ${id()}`);
    });
  });

  describe('updateApiKey', () => {
    it('keeps the status when only a name is given', async () => {
      const updated = await service.updateApiKey(ORG, key(1).id, { name: 'renamed', now: nowMicros() }, CHANGES);

      expect(updated).toEqual({ ...key(1), name: 'renamed', status: 'inactive' });
      expect(await store.getApiKey(ORG, key(1).id)).toEqual(updated);
    });

    it('keeps the name when only a status is given', async () => {
      const updated = await service.updateApiKey(ORG, key(2).id, { status: 'active', now: nowMicros() }, CHANGES);

      expect(updated).toEqual({ ...key(2), status: 'active' });
      expect(await store.getApiKey(ORG, key(2).id)).toEqual(updated);
    });

    it.each([
      ['an empty update', {}],
      ['explicitly undefined fields', { name: undefined, status: undefined }],
    ])('returns the key unchanged for %s, without writing', async (_label, params) => {
      const write = vi.spyOn(store, 'updateApiKey');

      expect(await service.updateApiKey(ORG, key(0).id, { ...params, now: nowMicros() }, CHANGES)).toEqual(key(0));

      expect(write).not.toHaveBeenCalled();
      expect(await store.getApiKey(ORG, key(0).id)).toEqual(key(0));
    });

    it('sets both fields when both are given', async () => {
      const updated = await service.updateApiKey(
        ORG,
        key(0).id,
        { name: 'both', status: 'archived', now: nowMicros() },
        CHANGES,
      );

      expect(updated).toEqual({ ...key(0), name: 'both', status: 'archived' });
    });

    it.each([
      ['an unknown key', () => MISSING, {}],
      ['an unknown key with a change', () => MISSING, { name: 'x' }],
      ["another organization's key", () => foreign.id, { name: 'hijacked', status: 'archived' as const }],
      ["another organization's key, with an empty update", () => foreign.id, {}],
    ])('answers %s with not_found_error and changes nothing', async (_label, id, params) => {
      const error = await appErrorOf(() => service.updateApiKey(ORG, id(), { ...params, now: nowMicros() }, CHANGES));

      expect(error.type).toBe('not_found_error');
      expect(error.message).toBe(`api_key_id: no API key with ID ${id()}`);
      expect(await store.getApiKey(foreignOrganization, foreign.id)).toEqual(foreign);
      expect(await store.listApiKeys({ organizationId: ORG, limit: 10 })).toEqual({
        kind: 'page',
        keys: [...keys].reverse(),
        hasMore: false,
      });
    });
  });
});
