import type { Store } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import { Readiness } from '../../src/health/readiness.js';

const answeringStore = { ping: async () => {} } as Store;

describe('Readiness', () => {
  it('is not ready before the server has started (warmed up), then ready', async () => {
    const readiness = new Readiness(answeringStore);

    expect(await readiness.report()).toEqual({
      status: 'not_ready',
      checks: {
        startup: { status: 'fail', message: 'the server is starting' },
        shutdown: { status: 'pass' },
        store: { status: 'pass' },
      },
    });

    readiness.markStarted();

    expect((await readiness.report()).status).toBe('ready');
  });

  it('stays not ready once draining', async () => {
    const readiness = new Readiness(answeringStore);
    readiness.markStarted();

    readiness.markDraining();

    expect(readiness.draining).toBe(true);
    expect((await readiness.report()).status).toBe('not_ready');
  });

  it('waits for the database no longer than the server deadline, when that is shorter than a second', async () => {
    const readiness = new Readiness({ ping: () => new Promise<void>(() => {}) } as unknown as Store, {
      deadlineMs: 50,
    });

    const report = await readiness.report();

    expect(report.checks.store).toEqual({ status: 'fail', message: 'the database did not answer within 50 ms' });
  });
});
