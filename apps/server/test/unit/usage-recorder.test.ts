import type { KeyUse } from '@apikeys/store';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { UsageRecorder } from '../../src/verification/usage-recorder.js';

const MINUTE = 60_000_000;
const ORG = 'org_1';
const now = () => Date.now() * 1000;

/** A store that keeps each statement's uses, and fails the next one when told. */
function usageStore() {
  const statements: KeyUse[][] = [];
  let failNext = false;
  return {
    statements,
    failNext() {
      failNext = true;
    },
    async recordKeyUsage(uses: readonly KeyUse[]) {
      if (failNext) {
        failNext = false;
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
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 60_000);
    recorder.start();
    await recorder.flush();
    recorder.record('apikey_a', ORG, now());

    await recorder.stop();

    expect(store.statements.map((uses) => uses.map((use) => use.id))).toEqual([['apikey_a']]);
  });
});
