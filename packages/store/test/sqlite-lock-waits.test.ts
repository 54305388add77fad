import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/sqlite/open-sqlite-store.js';
import { nowMicros } from '../src/time.js';
import type { Store } from '../src/types.js';
import { DatabaseUnavailableError } from '../src/unavailable.js';
import { SqliteLockHolder } from '../testing/index.js';

/** The store's deadline here: how long a write waits for the lock. */
const DEADLINE_MS = 600;
/** How much later than the deadline a refusal may come on a loaded 2-core machine. */
const LATE_MS = 400;
/**
 * The longest the event loop may go without running a timer while writes wait for the lock. SQLite's busy handler
 * would hold it for the whole deadline.
 */
const STALL_LIMIT_MS = DEADLINE_MS / 4;

/** Watches the event loop with a timer every 2 ms; the function it returns stops and gives the longest gap. */
function watchEventLoop(): () => number {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 2);
  return () => {
    clearInterval(timer);
    return Math.max(longest, performance.now() - last);
  };
}

/** How a call ended (done, or its reason and write outcome), and when (ms after `started`). */
async function settle(call: () => Promise<unknown>, started: number): Promise<{ outcome: string; ms: number }> {
  try {
    await call();
    return { outcome: 'done', ms: performance.now() - started };
  } catch (error) {
    // A write refused for the lock was never made: the refusal says so.
    const outcome =
      error instanceof DatabaseUnavailableError ? `${error.reason}, ${error.writeOutcome}` : String(error);
    return { outcome, ms: performance.now() - started };
  }
}

describe('SQLite writes while another process holds the write lock', () => {
  let directory: string;
  let path: string;
  let store: Store;
  const ids = { organization: '', adminKey: '', verifierKey: '', apiKey: '', rotated: '' };

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'apikeys-lock-waits-'));
    path = join(directory, 'db.sqlite');
    const opened = openSqliteStore(path, { timeoutMs: DEADLINE_MS });
    store = opened.store;
    await opened.migrator.migrateToLatest();
    ids.organization = (await store.createOrganization('lock waits')).id;
    const organizationId = ids.organization;
    ids.adminKey = (await store.createAdminKey({ organizationId, name: 'admin' })).adminKey.id;
    ids.verifierKey = (await store.createVerifierKey({ organizationId, name: 'verifier' })).verifierKey.id;
    const createdBy = { id: 'user_locks', type: 'user' } as const;
    ids.apiKey = (await store.createApiKey({ organizationId, name: 'key', createdBy })).apiKey.id;
    ids.rotated = (await store.createApiKey({ organizationId, name: 'rotated', createdBy })).apiKey.id;
  });

  afterAll(async () => {
    await store?.close();
    await rm(directory, { recursive: true, force: true });
  });

  /** One call of every kind of write the store makes, each changing something. */
  function everyWrite(round: string): Record<string, () => Promise<unknown>> {
    const organizationId = ids.organization;
    const createdBy = { id: 'user_locks', type: 'user' } as const;
    return {
      createOrganization: () => store.createOrganization(`organization ${round}`),
      createAdminKey: () => store.createAdminKey({ organizationId, name: `admin ${round}` }),
      setAdminKeyStatus: () => store.setAdminKeyStatus(ids.adminKey, 'disabled'),
      createVerifierKey: () => store.createVerifierKey({ organizationId, name: `verifier ${round}` }),
      setVerifierKeyStatus: () => store.setVerifierKeyStatus(ids.verifierKey, 'disabled'),
      createApiKey: () => store.createApiKey({ organizationId, name: `key ${round}`, createdBy }),
      rotateApiKey: () =>
        store.rotateApiKey({ organizationId, id: ids.rotated, gracePeriodMicros: 1_000_000, createdBy }),
      updateApiKey: () => store.updateApiKey(organizationId, ids.apiKey, { name: `renamed ${round}` }),
      recordKeyUsage: () => store.recordKeyUsage([{ id: ids.apiKey, organizationId, lastUsedAt: nowMicros() }]),
      transaction: () =>
        store.transaction((inner) =>
          inner.updateApiKey(organizationId, ids.apiKey, { name: `in a transaction ${round}` }),
        ),
    };
  }

  it('each fails as busy at the deadline, on timers that leave the event loop free, and succeeds once released', async () => {
    const holder = await SqliteLockHolder.take(path);
    try {
      const stalls = watchEventLoop();
      const started = performance.now();
      const writes = Object.entries(everyWrite('during'));
      const results = await Promise.all(writes.map(([, call]) => settle(call, started)));
      const longestStall = stalls();
      if (process.env.LOCK_WAIT_FIGURES) {
        const times = results.map(({ ms }) => Math.round(ms)).join(', ');
        process.stderr.write(
          `[lock waits] refusals after (ms): ${times}; longest stall: ${Math.round(longestStall)} ms\n`,
        );
      }

      const refusals = Object.fromEntries(writes.map(([name], index) => [name, results[index]?.outcome]));
      expect(refusals).toEqual(Object.fromEntries(writes.map(([name]) => [name, 'busy, not_made'])));
      for (const [index, [name]] of writes.entries()) {
        const ms = results[index]?.ms ?? 0;
        expect(ms, name).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
        expect(ms, name).toBeLessThan(DEADLINE_MS + LATE_MS);
      }
      expect(longestStall).toBeLessThan(STALL_LIMIT_MS);
      // Reads are answered meanwhile: WAL readers do not wait for the writer.
      expect((await store.getApiKey(ids.organization, ids.apiKey))?.name).toBe('key');
    } finally {
      await holder.release().catch(() => holder.kill());
    }

    const started = performance.now();
    const writes = Object.entries(everyWrite('after'));
    const results = await Promise.all(writes.map(([, call]) => settle(call, started)));
    expect(Object.fromEntries(writes.map(([name], index) => [name, results[index]?.outcome]))).toEqual(
      Object.fromEntries(writes.map(([name]) => [name, 'done'])),
    );
    expect((await store.getApiKey(ids.organization, ids.apiKey))?.lastUsedAt).toEqual(expect.any(Number));
  });
});
