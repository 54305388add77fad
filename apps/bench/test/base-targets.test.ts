import { describe, expect, it } from 'vitest';
import { basePairs, withBaseTargets } from '../src/base/base-targets.js';
import { runOrder } from '../src/run-order.js';
import { type BaseBuild, comparedWith, planTargets, type Target } from '../src/targets.js';

const build: BaseBuild = { commit: '9845cbd1fc0a5e3eb9e5b4603831dd080aff083d', label: '9845cbd', root: '/tmp/base' };
const full = { quick: false, sizes: [10_000, 1_000_000] as const, postgres: true, only: [] };

const names = (targets: readonly Target[]) => targets.map((target) => target.name);
const scenarioNames = (target: Target | undefined) => target?.scenarios.map((scenario) => scenario.name);

describe('withBaseTargets', () => {
  it("puts the base's counterpart right after each one-process target, and none after a variant or the replicas", () => {
    const planned = planTargets(full);

    const targets = withBaseTargets(planned, build);

    const added = targets.filter((target) => !planned.includes(target));
    expect(names(added)).toEqual([
      'sqlite-10k@9845cbd',
      'sqlite-1m@9845cbd',
      'postgres-10k@9845cbd',
      'postgres-1m@9845cbd',
    ]);
    for (const counterpart of added) {
      const current = names(targets)[names(targets).indexOf(counterpart.name) - 1];
      expect(counterpart).toMatchObject({ kind: 'api', build, counterpartOf: current, replicas: 1 });
    }
    expect(names(targets).slice(names(targets).indexOf('sqlite-1m'), names(targets).indexOf('sqlite-1m') + 3)).toEqual([
      'sqlite-1m',
      'sqlite-1m@9845cbd',
      'sqlite-1m+control',
    ]);
  });

  it("gives a counterpart its current target's engine, keys, server and scenarios as the plan selected them", () => {
    const planned = planTargets({ ...full, quick: true, sizes: [1000, 2000], only: ['sqlite-2k/'] });

    const targets = withBaseTargets(planned, build);

    const current = targets.find((target) => target.name === 'sqlite-2k');
    const counterpart = targets.find((target) => target.name === 'sqlite-2k@9845cbd');
    expect(counterpart).toMatchObject({ engine: 'sqlite', keys: 2000, script: current?.script });
    expect(scenarioNames(counterpart)).toEqual(scenarioNames(current));
    expect(scenarioNames(counterpart)).toContain('list-20');
    expect(scenarioNames(counterpart)).not.toContain('get');
  });

  it('compares only the targets --only keeps', () => {
    const targets = withBaseTargets(planTargets({ ...full, postgres: false, only: ['sqlite-1m/get'] }), build);

    expect(names(targets.filter((target) => target.kind === 'api'))).toEqual(['sqlite-1m', 'sqlite-1m@9845cbd']);
    expect(basePairs(targets)).toEqual([{ current: 'sqlite-1m', base: 'sqlite-1m@9845cbd' }]);
  });
});

describe('the run order of a current target and its base counterpart', () => {
  const jobsOf = (targets: readonly Target[], scenario: string) =>
    targets
      .filter((target) => target.scenarios.some((candidate) => candidate.name === scenario))
      .map((target) => ({ entry: { target } }));
  const order = (targets: readonly Target[], scenario: string, rounds: number) =>
    runOrder(jobsOf(targets, scenario), (entry) => comparedWith(entry?.target), rounds).map(
      (job) => job.entry.target.name,
    );

  it('runs the base between two runs of the current target in every round', () => {
    const targets = withBaseTargets(planTargets({ ...full, only: ['postgres-1m/get'] }), build);

    expect(order(targets, 'get', 3)).toEqual([
      'postgres-1m',
      'postgres-1m@9845cbd',
      'postgres-1m',
      'postgres-1m@9845cbd',
      'postgres-1m',
      'postgres-1m@9845cbd',
      'postgres-1m',
    ]);
  });

  it("runs the current target's variants between the same two runs, and the current target again after them", () => {
    const targets = withBaseTargets(planTargets({ ...full, postgres: false, only: ['sqlite-1m+control/'] }), build);

    expect(order(targets, 'list-20', 1)).toEqual([
      'bare-http',
      'bare-express',
      'express-validator',
      'sqlite-1m',
      'sqlite-1m@9845cbd',
      'sqlite-1m+control',
      'sqlite-1m',
    ]);
  });
});
