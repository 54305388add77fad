import { describe, expect, it } from 'vitest';
import { openStore } from '../src/open-store.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';
import { seedApiKeys } from '../src/seeding/index.js';
import { SQLITE_MEMORY } from '../src/sqlite/open-sqlite-store.js';
import { STORE_CALLS } from '../src/store-calls.js';

const SPECIAL_CALLS = ['close', 'poolStats', 'transaction', 'watchKeyChanges'];

describe('the calls of an opened store', () => {
  it('are every call of STORE_CALLS and the special ones, each wrapped once by the classifier', async () => {
    const { store, migrator } = await openStore({ kind: 'sqlite', path: SQLITE_MEMORY });
    try {
      await migrator.migrateToLatest();

      expect(Object.keys(store).sort()).toEqual([...Object.keys(STORE_CALLS), ...SPECIAL_CALLS].sort());
      await expect(store.getOrganization(DEFAULT_ORGANIZATION.id)).resolves.toMatchObject({
        name: 'Default organization',
      });
    } finally {
      await store.close();
    }
  });

  it('seed through the seeding port, which is no call of the store, outside and inside a transaction', async () => {
    const { store, migrator } = await openStore({ kind: 'sqlite', path: SQLITE_MEMORY });
    try {
      await migrator.migrateToLatest();
      const options = { organizationId: DEFAULT_ORGANIZATION.id, count: 5, workspaces: 1, users: 1, seed: 1 };

      await expect(seedApiKeys(store, options)).resolves.toBe(5);
      await expect(store.transaction((inner) => seedApiKeys(inner, options))).rejects.toThrow(
        'seeding cannot run inside transaction()',
      );
      const callsOnly = Object.fromEntries(Object.entries(store)) as typeof store;
      await expect(seedApiKeys(callsOnly, options)).rejects.toThrow(TypeError);
    } finally {
      await store.close();
    }
  });
});
