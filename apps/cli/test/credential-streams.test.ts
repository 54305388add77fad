import {
  type FeedReader,
  type StartedServerProcess,
  startServerProcess,
  subscribeToChanges,
} from '@apikeys/server/testing';
import type { Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, ENGINES } from './databases.js';
import { runCliJson } from './run-cli.js';

// A disabled admin or verifier key's open change feed subscriptions end on every replica, however it was disabled:
// here by the operator CLI, a process of its own, while two server processes share the database (on SQLite, one
// file: the servers learn of another process's commit only that something changed, and read their subscribers'
// credentials again). On PostgreSQL, the CLI's notification names the key. The test lives here because this package
// alone has the CLI and the server's test support without a cycle between packages.

/** The change feed's propagation bound: a change reaches every server's subscribers within a second. */
const PROPAGATION_LIMIT_MS = 1_000;

describe.each(ENGINES)(
  'a disabled credential ends its open subscriptions on every replica ($engine)',
  ({ engine, create }) => {
    let database: CliDatabase;
    let store: Store;
    let replicas: StartedServerProcess[];
    let organizationId: string;
    const readers: FeedReader[] = [];
    const delays: number[] = [];

    beforeAll(async () => {
      database = await create();
      replicas = [await startServerProcess({ env: database.env }), await startServerProcess({ env: database.env })];
      store = await database.openStore();
      ({ id: organizationId } = await store.createOrganization('streams'));
    });
    afterAll(async () => {
      for (const reader of readers) {
        reader.close();
      }
      await Promise.all(replicas.map((replica) => replica.stop()));
      await store?.close();
      await database?.drop();
      const max = Math.max(...delays);
      process.stdout.write(
        `${engine}: a disabled credential's streams ended ${delays.length} times, at most ${max.toFixed(0)} ms after ` +
          'the CLI exited\n',
      );
    });

    /** A subscription with `secret` on each replica, live. */
    async function subscribeOnEach(secret: string): Promise<FeedReader[]> {
      const opened = await Promise.all(replicas.map((replica) => subscribeToChanges(replica.baseUrl, secret)));
      readers.push(...opened);
      await Promise.all(opened.map((reader) => reader.next((event) => event.type === 'subscribed')));
      return opened;
    }

    /** Milliseconds from `since` to the end of `reader`'s stream, at most `limitMs` (then it throws). */
    async function endedAfter(reader: FeedReader, since: number, limitMs: number): Promise<number> {
      await reader.ended(limitMs);
      return performance.now() - since;
    }

    it.each([
      ['verifier key', 'verifier-keys'],
      ['admin key', 'admin-keys'],
    ] as const)('ends the streams of a %s the CLI disables, within a second; the others stay', async (_, command) => {
      const { id, secret } =
        command === 'verifier-keys'
          ? await store
              .createVerifierKey({ organizationId, name: 'disabled soon' })
              .then(({ verifierKey, secret }) => ({ id: verifierKey.id, secret }))
          : await store
              .createAdminKey({ organizationId, name: 'disabled soon' })
              .then(({ adminKey, secret }) => ({ id: adminKey.id, secret }));
      const { secret: otherSecret } = await store.createVerifierKey({ organizationId, name: 'kept' });
      const doomed = await subscribeOnEach(secret);
      const kept = await subscribeOnEach(otherSecret);

      await runCliJson([command, 'disable', id], database.env);
      const disabledAt = performance.now();
      const ended = await Promise.all(doomed.map((reader) => endedAfter(reader, disabledAt, 5_000)));
      delays.push(...ended);
      // Once the disabled key's streams have ended, a change would have ended the others too.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const again = await subscribeToChanges(replicas[0]?.baseUrl ?? '', secret);
      readers.push(again);

      expect(Math.max(...ended)).toBeLessThanOrEqual(PROPAGATION_LIMIT_MS);
      expect(kept.map((reader) => reader.isEnded)).toEqual([false, false]);
      expect(again.response.status).toBe(401);
    });
  },
);
