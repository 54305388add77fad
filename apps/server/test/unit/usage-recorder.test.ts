import type { KeyUse } from '@apikeys/store';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { USES_PER_STATEMENT, type UsageDropReason, UsageRecorder } from '../../src/verification/usage-recorder.js';

const MINUTE = 60_000_000;
const ORG = 'org_1';
const now = () => Date.now() * 1000;

/** A store that keeps each statement's uses, and fails the next one when told (once `release` is called, if held). */
function usageStore() {
  const statements: KeyUse[][] = [];
  let failNext = false;
  let held: Promise<void> | undefined;
  let release = () => {};
  return {
    statements,
    calls: 0,
    failNext(hold = false) {
      failNext = true;
      held = hold ? new Promise((resolve) => (release = resolve)) : undefined;
    },
    release: () => release(),
    async recordKeyUsage(uses: readonly KeyUse[]) {
      this.calls += 1;
      if (failNext) {
        failNext = false;
        await held;
        throw new Error('the database is unavailable');
      }
      statements.push([...uses]);
    },
  };
}

describe('UsageRecorder', () => {
  it('writes each key once per minute, cut to the minute, all keys in one statement per flush', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    const minute = Math.floor(at / MINUTE) * MINUTE;

    for (let n = 0; n < 100; n++) {
      recorder.record('apikey_a', ORG, at + (n % 5));
      recorder.record('apikey_b', ORG, at);
    }
    await recorder.flush();
    recorder.record('apikey_a', ORG, at + 1);
    await recorder.flush();

    expect(store.statements).toEqual([
      [
        { id: 'apikey_a', organizationId: ORG, lastUsedAt: minute },
        { id: 'apikey_b', organizationId: ORG, lastUsedAt: minute },
      ],
    ]);
  });

  it('writes a key again in a later minute', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    const minute = Math.floor(at / MINUTE) * MINUTE;

    recorder.record('apikey_a', ORG, at - MINUTE);
    recorder.record('apikey_a', ORG, at);
    await recorder.flush();

    expect(store.statements).toEqual([[{ id: 'apikey_a', organizationId: ORG, lastUsedAt: minute }]]);
  });

  it('never moves a noted use back: a use reported late, of an earlier minute, changes nothing', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    const minute = Math.floor(at / MINUTE) * MINUTE;

    recorder.record('apikey_a', ORG, at);
    recorder.record('apikey_a', ORG, at - 2 * MINUTE);
    await recorder.flush();

    expect(store.statements).toEqual([[{ id: 'apikey_a', organizationId: ORG, lastUsedAt: minute }]]);
  });

  it('keeps the uses of a write that failed for the next one', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    recorder.record('apikey_a', ORG, at);
    store.failNext();

    await recorder.flush();
    await recorder.flush();

    expect(store.statements).toEqual([
      [{ id: 'apikey_a', organizationId: ORG, lastUsedAt: Math.floor(at / MINUTE) * MINUTE }],
    ]);
  });

  it('writes what is left when stopped, and nothing when nothing was used', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), { intervalMs: 60_000 });
    recorder.start();
    await recorder.flush();
    recorder.record('apikey_a', ORG, now());

    await recorder.stop();

    expect(store.statements.map((uses) => uses.map((use) => use.id))).toEqual([['apikey_a']]);
  });

  it("keeps each organization's notes apart: another's use of the same key ID does not stand in for this one's", async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    const minute = Math.floor(at / MINUTE) * MINUTE;

    recorder.record('apikey_a', 'org_attacker', at);
    recorder.record('apikey_a', ORG, at);
    await recorder.flush();

    expect(store.statements).toEqual([
      [
        { id: 'apikey_a', organizationId: 'org_attacker', lastUsedAt: minute },
        { id: 'apikey_a', organizationId: ORG, lastUsedAt: minute },
      ],
    ]);
  });

  it('writes in statements of at most USES_PER_STATEMENT uses, all of them', async () => {
    const store = usageStore();
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }));
    const at = now();
    const keys = 2 * USES_PER_STATEMENT + 7;

    for (let n = 0; n < keys; n++) {
      recorder.record(`apikey_${n}`, ORG, at);
    }
    await recorder.flush();

    expect(store.statements.map((uses) => uses.length)).toEqual([USES_PER_STATEMENT, USES_PER_STATEMENT, 7]);
  });

  it('keeps at most maxPendingKeys keys waiting, counts the uses it drops, and takes new keys once written', async () => {
    const store = usageStore();
    const dropped: [UsageDropReason, number][] = [];
    const counters = { countKeyUsesDropped: (reason: UsageDropReason, count: number) => dropped.push([reason, count]) };
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), { maxPendingKeys: 3, counters });
    const at = now();

    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      recorder.record(`apikey_${id}`, ORG, at);
    }
    recorder.record('apikey_a', ORG, at + MINUTE);
    const pending = recorder.pending;
    await recorder.flush();
    recorder.record('apikey_f', ORG, at + MINUTE);
    await recorder.flush();

    expect(pending).toBe(3);
    expect(dropped).toEqual([
      ['pending_full', 1],
      ['pending_full', 1],
    ]);
    expect(store.statements.map((uses) => uses.map((use) => use.id))).toEqual([
      ['apikey_a', 'apikey_b', 'apikey_c'],
      ['apikey_f'],
    ]);
  });

  it('keeps what a failed write held within the bound while the database is away, and counts the rest', async () => {
    const store = usageStore();
    const dropped: [UsageDropReason, number][] = [];
    const counters = { countKeyUsesDropped: (reason: UsageDropReason, count: number) => dropped.push([reason, count]) };
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), { maxPendingKeys: 3, counters });
    const at = now();
    for (const id of ['a', 'b', 'c']) {
      recorder.record(`apikey_${id}`, ORG, at);
    }
    store.failNext(true);

    const writing = recorder.flush();
    await vi.waitFor(() => expect(store.calls).toBe(1));
    // Noted while the failing write is on its way: two new keys take two of the places.
    recorder.record('apikey_d', ORG, at);
    recorder.record('apikey_e', ORG, at);
    store.release();
    await writing;
    await recorder.flush();

    expect(dropped).toEqual([['write_failed', 2]]);
    expect(store.statements.map((uses) => uses.map((use) => use.id).sort())).toEqual([
      ['apikey_a', 'apikey_d', 'apikey_e'],
    ]);
  });
});
