import type { ApiKey } from '@apikeys/api-types';
import { type KyselyStore, openSqliteStore, SQLITE_MEMORY } from '@apikeys/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeysService } from '../../src/domain/api-keys-service.js';
import { AppError } from '../../src/domain/errors.js';

const ORG = 'org_default';
const MISSING = 'apikey_000000000000000000000000';

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
  let store: KyselyStore;
  let service: ApiKeysService;
  let keys: ApiKey[];
  let foreign: ApiKey;
  let foreignOrganization: string;

  beforeEach(async () => {
    store = openSqliteStore(SQLITE_MEMORY);
    await store.migrate();
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
  afterEach(() => store.close());

  const key = (index: number): ApiKey => {
    const found = keys[index];
    if (!found) {
      throw new Error(`no fixture key ${index}`);
    }
    return found;
  };

  describe('list', () => {
    it('refuses both cursors at once with an invalid_request_error naming both parameters', async () => {
      const error = await appErrorOf(() =>
        service.list(ORG, { limit: 10, beforeId: key(0).id, afterId: key(2).id, filters: {} }),
      );

      expect(error.type).toBe('invalid_request_error');
      expect(error.status).toBe(400);
      expect(error.message).toMatch(/before_id/);
      expect(error.message).toMatch(/after_id/);
    });

    it.each([
      ['afterId', 'after_id'],
      ['beforeId', 'before_id'],
    ] as const)('refuses an unknown %s with a message that starts with %s', async (field, parameter) => {
      const error = await appErrorOf(() => service.list(ORG, { limit: 10, [field]: MISSING, filters: {} }));

      expect(error.type).toBe('invalid_request_error');
      expect(error.message.startsWith(`${parameter}: `)).toBe(true);
      expect(error.message).toContain(MISSING);
    });

    it("refuses another organization's key as a cursor like an unknown one", async () => {
      const error = await appErrorOf(() => service.list(ORG, { limit: 10, afterId: foreign.id, filters: {} }));

      expect(error.type).toBe('invalid_request_error');
      expect(error.message.startsWith('after_id: ')).toBe(true);
    });

    it('returns a page newest first with first_id, last_id and has_more', async () => {
      const page = await service.list(ORG, { limit: 2, filters: {} });

      expect(page.data.map((item) => item.name)).toEqual(['third', 'second']);
      expect(page).toMatchObject({ has_more: true, first_id: key(2).id, last_id: key(1).id });
    });

    it('returns null first_id and last_id on an empty page', async () => {
      const page = await service.list(ORG, { limit: 5, filters: { workspaceId: 'wrkspc_none' } });

      expect(page).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    });
  });

  describe('get', () => {
    it('returns the key of the organization', async () => {
      expect(await service.get(ORG, key(0).id)).toEqual(key(0));
    });

    it.each([
      ['an unknown key', () => MISSING],
      ["another organization's key", () => foreign.id],
    ])('answers %s with not_found_error naming api_key_id', async (_label, id) => {
      const error = await appErrorOf(() => service.get(ORG, id()));

      expect(error.type).toBe('not_found_error');
      expect(error.status).toBe(404);
      expect(error.message).toBe(`api_key_id: no API key with ID ${id()}`);
    });
  });

  describe('update', () => {
    it('keeps the status when status is null, and still applies the name', async () => {
      const updated = await service.update(ORG, key(1).id, { name: 'renamed', status: null });

      expect(updated).toEqual({ ...key(1), name: 'renamed', status: 'inactive' });
      expect(await store.getApiKey(ORG, key(1).id)).toEqual(updated);
    });

    it('keeps everything when only status null is given', async () => {
      expect(await service.update(ORG, key(2).id, { status: null })).toEqual(key(2));
    });

    it.each([
      ['an empty update', {}],
      ['explicitly undefined fields', { name: undefined, status: undefined }],
    ])('returns the key unchanged for %s', async (_label, params) => {
      expect(await service.update(ORG, key(0).id, params)).toEqual(key(0));
      expect(await store.getApiKey(ORG, key(0).id)).toEqual(key(0));
    });

    it('sets both fields when both are given', async () => {
      const updated = await service.update(ORG, key(0).id, { name: 'both', status: 'archived' });

      expect(updated).toEqual({ ...key(0), name: 'both', status: 'archived' });
    });

    it.each([
      ['an unknown key', () => MISSING, {}],
      ['an unknown key with a change', () => MISSING, { name: 'x' }],
      ["another organization's key", () => foreign.id, { name: 'hijacked', status: 'archived' as const }],
    ])('answers %s with not_found_error and changes nothing', async (_label, id, params) => {
      const error = await appErrorOf(() => service.update(ORG, id(), params));

      expect(error.type).toBe('not_found_error');
      expect(error.message).toBe(`api_key_id: no API key with ID ${id()}`);
      expect(await store.getApiKey(foreignOrganization, foreign.id)).toEqual(foreign);
      expect((await store.listApiKeys({ organizationId: ORG, limit: 10 }))?.data).toEqual([...keys].reverse());
    });
  });
});
