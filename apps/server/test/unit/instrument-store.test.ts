import { DEFAULT_ORGANIZATION, openStore, SQLITE_MEMORY, STORE_CALLS } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { describe, expect, it } from 'vitest';
import { instrumentStore } from '../../src/metrics/instrument-store.js';
import { Metrics } from '../../src/metrics/metrics.js';

describe('instrumentStore', () => {
  it('times every call of STORE_CALLS by its name, and keeps the store it wraps seedable', async () => {
    const { store: opened, migrator } = await openStore({ kind: 'sqlite', path: SQLITE_MEMORY });
    await migrator.migrateToLatest();
    const metrics = new Metrics();
    const store = instrumentStore(opened, metrics);
    try {
      expect(Object.keys(store).sort()).toEqual(
        [...Object.keys(STORE_CALLS), 'close', 'poolStats', 'transaction', 'watchKeyChanges'].sort(),
      );
      const organizationId = DEFAULT_ORGANIZATION.id;
      await expect(seedApiKeys(store, { organizationId, count: 3, workspaces: 1, users: 1, seed: 2 })).resolves.toBe(3);
      await store.listApiKeys({ organizationId, limit: 10 });

      const text = await metrics.registry.metrics();
      expect(text).toMatch(/store_query_duration_seconds_count\{[^}]*kind="listApiKeys"[^}]*\} 1/);
    } finally {
      await store.close();
    }
  });
});
