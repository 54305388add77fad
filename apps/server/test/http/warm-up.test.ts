import { Writable } from 'node:stream';
import { createTestOrganization, openTestStore, snapshotKeys, specOperationIds } from '@apikeys/server/testing';
import type { Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warmUp } from '../../src/app.js';
import { createApp, createLogger } from '../../src/index.js';

describe('the warm-up at start', () => {
  let store: Store;
  const logged: string[] = [];

  beforeAll(async () => {
    const opened = await openTestStore();
    await opened.migrator.migrateToLatest();
    store = opened.store;
  });
  afterAll(() => store.close());

  it('sends every operation of the spec through the validator, reading and changing no data', async () => {
    const organization = await createTestOrganization(store);
    const before = await snapshotKeys(store, organization.id);
    const logger = createLogger(
      'debug',
      new Writable({
        write(chunk, _encoding, done) {
          logged.push(String(chunk));
          done();
        },
      }),
    );
    const app = createApp({ store, logger });

    const report = await warmUp(app);

    expect(report.map(({ operationId }) => operationId).sort()).toEqual([...specOperationIds()].sort());
    for (const { operationId, validatedAs } of report) {
      expect(validatedAs, operationId).toBe(operationId);
    }
    expect(Object.fromEntries(report.map(({ operationId, status }) => [operationId, status]))).toEqual({
      getHealth: 200,
      // Not started yet: readiness is marked started only once the warm-up is over.
      getReadiness: 503,
      listApiKeys: 200,
      getApiKey: 404,
      updateApiKey: 404,
    });
    expect(await snapshotKeys(store, organization.id)).toEqual(before);
    expect(logged.join('')).not.toMatch(/"level":50/);
  });
});
