import { Writable } from 'node:stream';
import { API_VERSIONS, LATEST_API_VERSION } from '@apikeys/api-types';
import { createTestOrganization, openTestStore, snapshotKeys, specOperationIds } from '@apikeys/server/testing';
import type { Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warmUp } from '../../src/app.js';
import { DEFAULT_CHANGE_FEED, KeyChangeFeed } from '../../src/change-feed/key-change-feed.js';
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

  it("sends every operation of each version's document through its validator, reading and changing no data", async () => {
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
    const changeFeed = new KeyChangeFeed(DEFAULT_CHANGE_FEED, logger, (credentials) =>
      store.findActiveCredentials(credentials),
    );
    const app = createApp({ store, logger, changeFeed });

    const report = await warmUp(app);
    changeFeed.close();

    for (const version of API_VERSIONS) {
      const ofVersion = report.filter((result) => result.version === version);
      expect(ofVersion.map(({ operationId }) => operationId).sort()).toEqual([...specOperationIds(version)].sort());
    }
    for (const { operationId, validatedAs } of report) {
      expect(validatedAs, operationId).toBe(operationId);
    }
    const latest = report.filter(({ version }) => version === LATEST_API_VERSION);
    expect(Object.fromEntries(latest.map(({ operationId, status }) => [operationId, status]))).toEqual({
      getHealth: 200,
      // Not started yet: readiness is marked started only once the warm-up is over.
      getReadiness: 503,
      listApiKeys: 200,
      getApiKey: 404,
      // An operation with a body gets the spec's example of it, which the validator passes; then it is ended, before
      // its handler, with a 400 whose validation builds the operation's response validators.
      updateApiKey: 400,
      createApiKey: 400,
      rotateApiKey: 400,
      listAuditEvents: 200,
      getAuditEvent: 404,
      verifyApiKey: 400,
      // A stream: the warm-up reads its headers, and leaves.
      streamKeyChanges: 200,
      reportKeyUsage: 400,
    });
    for (const { version, operationId, error } of report.filter((result) => result.status === 400)) {
      expect(error, `${version} ${operationId}`).toBe('a warm-up request; it reaches no operation');
    }
    expect(changeFeed.size).toBe(0);
    expect(await snapshotKeys(store, organization.id)).toEqual(before);
    expect(logged.join('')).not.toMatch(/"level":50/);
  });
});
