import { describe, expect, it } from 'vitest';
import { runOrder } from '../src/run-order.js';

/** A job of one scenario on the target `name`, a variant of `base` when given. */
const job = (name: string, base?: string) => ({ entry: { target: { name, base } } });
const baseOf = (entry: { target: { base?: string | undefined } } | undefined) => entry?.target.base;
const names = (jobs: readonly ReturnType<typeof job>[]) => jobs.map((each) => each.entry.target.name);

const jobs = [
  job('express-validator'),
  job('sqlite-10k'),
  job('sqlite-1m'),
  job('sqlite-1m+no-audit', 'sqlite-1m'),
  job('sqlite-1m+control', 'sqlite-1m'),
  job('postgres-1m'),
];

describe('runOrder', () => {
  it('runs every job once, and a base again right after its last variant', () => {
    expect(names(runOrder(jobs, baseOf, 1))).toEqual([
      'express-validator',
      'sqlite-10k',
      'sqlite-1m',
      'sqlite-1m+no-audit',
      'sqlite-1m+control',
      'sqlite-1m',
      'postgres-1m',
    ]);
  });

  it('repeats the whole sequence for each round, so that both sides of every comparison alternate', () => {
    const order = names(runOrder(jobs, baseOf, 3));
    expect(order).toHaveLength(21);
    expect(order.filter((name) => name === 'sqlite-10k')).toHaveLength(3);
    expect(order.filter((name) => name === 'sqlite-1m+no-audit')).toHaveLength(3);
    expect(order.filter((name) => name === 'sqlite-1m')).toHaveLength(6);
  });

  it('never runs a base twice in a row when a round ends with its variants', () => {
    const order = names(runOrder([job('sqlite-1m'), job('sqlite-1m+no-audit', 'sqlite-1m')], baseOf, 2));
    expect(order).toEqual(['sqlite-1m', 'sqlite-1m+no-audit', 'sqlite-1m', 'sqlite-1m+no-audit', 'sqlite-1m']);
  });
});
