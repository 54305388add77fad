import type { SeedResult } from './databases.js';
import type { GatewayForm } from './gateway/forms.js';
import type { GatewayLoad, GatewayResult, GatewayRun } from './gateway/scenario.js';
import { type PropagationResult, propagationSummary } from './propagation.js';
import { AUDIT_SCENARIOS, PERMISSION_SCENARIOS } from './scenarios.js';
import type { ScenarioResult } from './suite.js';
import {
  POSTGRES_REPLICAS,
  replicasTargetName,
  sizeLabel,
  VERIFY_CACHE_FULL_ENTRIES,
  variantTargetName,
} from './targets.js';

/** One target figure of an issue next to what this run measured. */
export interface GoalCheck {
  goal: string;
  measured: string;
  status: 'met' | 'not met' | 'not measured' | 'not comparable';
}

const PAGE_SCENARIOS = [
  'after',
  'before',
  'status-after',
  'workspace-after',
  'creator-after',
  'combo-after',
  'status-before',
  'workspace-before',
  'creator-before',
  'combo-before',
  'expired-after',
  'active-after',
  ...PERMISSION_SCENARIOS.map((scenario) => scenario.name),
  ...AUDIT_SCENARIOS.map((scenario) => scenario.name),
];

const fmt = (value: number, digits = 2) => value.toFixed(digits);

/**
 * The mean of a figure over every measurement of a scenario on a target (a base target runs twice; every target
 * `--rounds` times as often).
 */
function mean(
  results: readonly ScenarioResult[],
  target: string,
  scenario: string,
  figure: (result: ScenarioResult) => number,
): number | undefined {
  const runs = results.filter((result) => result.target === target && result.scenario === scenario);
  return runs.length === 0 ? undefined : runs.reduce((sum, run) => sum + figure(run), 0) / runs.length;
}

const meanCpu = (results: readonly ScenarioResult[], target: string, scenario: string) =>
  mean(results, target, scenario, (result) => result.serverCpuMicrosPerRequest);
const meanRate = (results: readonly ScenarioResult[], target: string, scenario: string) =>
  mean(results, target, scenario, (result) => result.requestsPerSecond);

/** Issue 16: each verification scenario's bound on the server's CPU per request, in express-validator's. */
const VERIFY_CPU_BOUNDS = [
  { scenario: 'verify', bound: 1.3, note: ' (cache hits)' },
  { scenario: 'verify-miss', bound: 2, note: '' },
] as const;

/** Checks the targets of the issues against the results. `sizes` are the smaller and the larger key counts run. */
export function checkGoals(
  results: readonly ScenarioResult[],
  seeds: readonly SeedResult[],
  sizes: readonly [number, number],
  propagation: readonly PropagationResult[] = [],
  gateways: readonly GatewayRun[] = [],
): GoalCheck[] {
  const [small, large] = sizes.map(sizeLabel) as [string, string];
  const checks: GoalCheck[] = [];
  const check = (goal: string, measured: string | undefined, ok: boolean | undefined) =>
    checks.push(
      measured === undefined
        ? { goal, measured: '–', status: 'not measured' }
        : { goal, measured, status: ok ? 'met' : 'not met' },
    );

  // Every figure below is the mean of its target's runs of the scenario (several with `--rounds`).
  const list20Cpu = meanCpu(results, `sqlite-${large}`, 'list-20');
  const express20Cpu = meanCpu(results, 'bare-express', 'list-20');
  const cpuRatio20 = list20Cpu && express20Cpu && list20Cpu / express20Cpu;
  check(
    `list 20, sqlite-${large}: server CPU/request ≤ 1.5× bare Express`,
    cpuRatio20 === undefined ? undefined : `${fmt(cpuRatio20)}×`,
    cpuRatio20 !== undefined && cpuRatio20 <= 1.5,
  );
  const list20P99 = mean(results, `sqlite-${large}`, 'list-20', (result) => result.latencyMs.p99);
  check(
    `list 20, sqlite-${large}: p99 ≤ 25 ms at 50 connections`,
    list20P99 === undefined ? undefined : `${fmt(list20P99, 1)} ms`,
    list20P99 !== undefined && list20P99 <= 25,
  );

  for (const engine of ['sqlite', 'postgres']) {
    for (const scenario of PAGE_SCENARIOS) {
      const pageTime = (target: string) => mean(results, target, scenario, (result) => result.latencyMs.mean);
      const big = pageTime(`${engine}-${large}`);
      const little = pageTime(`${engine}-${small}`);
      // Quick mode runs some paths on one size only: only pairs are compared.
      if (big === 0 || little === 0) {
        // A mean of no responses (every request timed out) is 0, which would pass.
        check(`${scenario}, ${engine}: mean page time ${large} ≤ 1.2× ${small}`, 'no response in the window', false);
      } else if (big !== undefined && little !== undefined) {
        const ratio = big / little;
        check(`${scenario}, ${engine}: mean page time ${large} ≤ 1.2× ${small}`, `${fmt(ratio)}×`, ratio <= 1.2);
      }
    }
  }

  const list1000Cpu = meanCpu(results, `sqlite-${large}`, 'list-1000');
  const express1000Cpu = meanCpu(results, 'bare-express', 'list-1000');
  const cpuRatio1000 = list1000Cpu && express1000Cpu && list1000Cpu / express1000Cpu;
  check(
    `list 1000, sqlite-${large}: server CPU/request ≤ 2× bare Express (1000 items)`,
    cpuRatio1000 === undefined ? undefined : `${fmt(cpuRatio1000)}×`,
    cpuRatio1000 !== undefined && cpuRatio1000 <= 2,
  );

  for (const scenario of ['update', 'update-hot']) {
    const perSecond = meanRate(results, `sqlite-${large}`, scenario);
    check(
      `${scenario}, sqlite-${large}: ≥ 1,000 durable updates/s`,
      perSecond === undefined ? undefined : `${Math.round(perSecond)}/s`,
      perSecond !== undefined && perSecond >= 1000,
    );
  }
  // The audit trail: durable updates with every change recorded, against the same server on the same database with
  // the bench's trigger dropping every event (`+no-audit`, run between two runs with the trail; targets.ts).
  for (const engine of ['sqlite', 'postgres']) {
    for (const scenario of ['update', 'update-hot']) {
      const target = `${engine}-${large}`;
      const withTrail = meanRate(results, target, scenario);
      const without = meanRate(results, variantTargetName(target, 'no-audit'), scenario);
      const share = withTrail && without && withTrail / without;
      check(
        `${scenario}, ${target}: durable updates/s with the audit trail ≥ 0.85× without`,
        share === undefined
          ? undefined
          : `${fmt(share)}× (${Math.round(withTrail ?? 0)} vs ${Math.round(without ?? 0)}/s)`,
        share !== undefined && share >= 0.85,
      );
    }
  }
  const replicated = meanRate(results, replicasTargetName(sizes[1]), 'update');
  check(
    `update, postgres-${large}, ${POSTGRES_REPLICAS} replicas: ≥ 2,000 durable updates/s`,
    replicated === undefined ? undefined : `${Math.round(replicated)}/s`,
    replicated !== undefined && replicated >= 2000,
  );

  const seed = seeds.find((entry) => entry.engine === 'sqlite' && entry.keys === sizes[1]);
  check(`seed ${large} keys on SQLite ≤ 30 s`, seed && `${fmt(seed.seconds, 1)} s`, seed && seed.seconds <= 30);
  // Per server process: each replica's RSS counts on its own.
  const underLoad = results.filter((result) => result.keys === sizes[1]);
  const peak = underLoad.length > 0 ? Math.max(...underLoad.map((result) => result.serverPeakRssBytes)) : undefined;
  check(
    `server RSS ≤ 200 MB under load with ${large} keys`,
    peak === undefined ? undefined : `${fmt(peak / 1e6, 0)} MB peak`,
    peak !== undefined && peak <= 200e6,
  );
  // How far two processes of the same server differ: the precision of the variant comparisons below.
  const base = meanCpu(results, `sqlite-${large}`, 'list-20');
  const control = meanCpu(results, variantTargetName(`sqlite-${large}`, 'control'), 'list-20');
  const noise = base && control && control / base;
  check(
    `list 20, sqlite-${large}: CPU/request of another process of the same server within 1.05× (the noise)`,
    noise === undefined ? undefined : `${fmt(noise)}× (${Math.round(control ?? 0)} vs ${Math.round(base ?? 0)} µs)`,
    noise !== undefined && Math.abs(noise - 1) <= 0.05,
  );
  // Issue 12: what rate limiting costs, against the same server without it, measured before and after it.
  const limited = meanCpu(results, variantTargetName(`sqlite-${large}`, 'ratelimited'), 'list-20');
  const limiterCost = base && limited && limited / base;
  check(
    `list 20, sqlite-${large}: CPU/request with the in-memory rate limiter ≤ 1.05× without`,
    limiterCost === undefined
      ? undefined
      : `${fmt(limiterCost)}× (${Math.round(limited ?? 0)} vs ${Math.round(base ?? 0)} µs)`,
    limiterCost !== undefined && limiterCost <= 1.05,
  );
  // Issue 13: what recording the metrics costs each request, against the same server without them.
  const measured = meanCpu(results, variantTargetName(`sqlite-${large}`, 'metrics'), 'list-20');
  const metricsCost = base && measured && measured / base;
  check(
    `list 20, sqlite-${large}: CPU/request with metrics on ≤ 1.05× off`,
    metricsCost === undefined
      ? undefined
      : `${fmt(metricsCost)}× (${Math.round(measured ?? 0)} vs ${Math.round(base ?? 0)} µs)`,
    metricsCost !== undefined && metricsCost <= 1.05,
  );
  // Issue 14: the latest API version's key shape, against the first version's, on the same server and keys.
  const latest = meanCpu(results, variantTargetName(`sqlite-${large}`, 'latest-version'), 'list-20');
  const versionCost = base && latest && latest / base;
  check(
    `list 20, sqlite-${large}: CPU/request in the latest API version ≤ 1.10× the first version`,
    versionCost === undefined
      ? undefined
      : `${fmt(versionCost)}× (${Math.round(latest ?? 0)} vs ${Math.round(base ?? 0)} µs)`,
    versionCost !== undefined && versionCost <= 1.1,
  );
  // Issue 16: verification, against the reference that validates the same requests and responses.
  for (const engine of ['sqlite', 'postgres']) {
    const target = `${engine}-${large}`;
    for (const { scenario, bound, note } of VERIFY_CPU_BOUNDS) {
      const server = meanCpu(results, target, scenario);
      const validator = meanCpu(results, 'express-validator', scenario);
      const ratio = server && validator && server / validator;
      check(
        `${scenario}, ${target}: server CPU/request ≤ ${bound}× express-validator${note}`,
        ratio === undefined
          ? undefined
          : `${fmt(ratio)}× (${Math.round(server ?? 0)} vs ${Math.round(validator ?? 0)} µs)`,
        ratio !== undefined && ratio <= bound,
      );
    }
    // Permissions: a verification with a requirement, against the same verifications without one (the mean of the
    // base's runs before and after the variant's), the keys satisfying it or not.
    const without = meanCpu(results, target, 'verify');
    for (const [suffix, how] of [
      ['requirement', 'satisfied'],
      ['requirement-denied', 'not satisfied'],
    ] as const) {
      const withRequirement = meanCpu(results, variantTargetName(target, suffix), 'verify');
      const cost = without && withRequirement && withRequirement / without;
      check(
        `verify, ${target}: server CPU/request with a permission requirement (${how}) ≤ 1.05× without`,
        cost === undefined
          ? undefined
          : `${fmt(cost)}× (${Math.round(withRequirement ?? 0)} vs ${Math.round(without ?? 0)} µs)`,
        cost !== undefined && cost <= 1.05,
      );
    }
    // The peak over the variant's runs: `verify` fills its cache with keys, `verify-miss` replaces them one by one.
    const full = results.filter((result) => result.target === variantTargetName(target, 'verify-cache-full'));
    const fullPeak = full.length > 0 ? Math.max(...full.map((result) => result.serverPeakRssBytes)) : undefined;
    check(
      `verify, ${target}: server RSS ≤ 200 MB with its verification cache full (${VERIFY_CACHE_FULL_ENTRIES} entries)`,
      fullPeak === undefined ? undefined : `${fmt(fullPeak / 1e6, 0)} MB peak`,
      fullPeak !== undefined && fullPeak <= 200e6,
    );
  }
  // Issue 16: a deactivation through one replica, in the other's verification within a second, every trial.
  for (const result of propagation) {
    const { medianMs, maxMs } = propagationSummary(result);
    check(
      `propagation, ${result.target}: a deactivation reaches the other replica's verification within 1 s`,
      `median ${fmt(medianMs, 1)} ms, max ${fmt(maxMs, 1)} ms (${result.delaysMs.length} trials)`,
      result.timedOut === 0 && maxMs <= 1_000,
    );
  }
  checkGateways(gateways, sizes, check);
  return checks;
}

/** The mean of a figure over the runs of one form of a gateway run, under one load (saturated unless said). */
function gatewayMean(
  run: GatewayRun | undefined,
  form: GatewayForm,
  figure: (result: GatewayResult) => number,
  load: GatewayLoad = 'saturated',
) {
  const runs = run?.results.filter((result) => result.form === form && result.load === load) ?? [];
  return runs.length === 0 ? undefined : runs.reduce((sum, result) => sum + figure(result), 0) / runs.length;
}

/**
 * The gateway's targets, per engine on the smaller store and again on the larger (1M keys must change none of them):
 * the README's middleware with a caching verifier costs the gateway at most 1.2× the CPU of a constant-key check and
 * at most 1 ms of p99, and leaves the key server under 1 % of the CPU that a verification per request costs it; a
 * permission requirement on the route costs the cached gateway at most 5 % more CPU.
 */
function checkGateways(
  gateways: readonly GatewayRun[],
  sizes: readonly [number, number],
  check: (goal: string, measured: string | undefined, ok: boolean | undefined) => void,
): void {
  for (const target of ['sqlite', 'postgres'].flatMap((engine) =>
    sizes.map((keys) => `gateway-${engine}-${sizeLabel(keys)}`),
  )) {
    const run = gateways.find((entry) => entry.target === target);
    const cpu = (form: GatewayForm) => gatewayMean(run, form, (result) => result.gatewayCpuMicrosPerRequest);
    const p99 = (form: GatewayForm, load: GatewayLoad) =>
      gatewayMean(run, form, (result) => result.latencyMs.p99, load);
    const keyServer = (form: GatewayForm) => gatewayMean(run, form, (result) => result.keyServerCpuMicrosPerRequest);
    const [cachedCpu, floorCpu] = [cpu('cached'), cpu('floor')];
    const cpuRatio = cachedCpu && floorCpu && cachedCpu / floorCpu;
    check(
      `${target}: cached gateway CPU/request ≤ 1.2× the floor's (a constant key)`,
      cpuRatio === undefined
        ? undefined
        : `${fmt(cpuRatio)}× (${fmt(cachedCpu ?? 0, 1)} vs ${fmt(floorCpu ?? 0, 1)} µs)`,
      cpuRatio !== undefined && cpuRatio <= 1.2,
    );
    for (const load of ['saturated', 'one connection'] as const) {
      const [cachedP99, floorP99] = [p99('cached', load), p99('floor', load)];
      const slower = cachedP99 !== undefined && floorP99 !== undefined ? cachedP99 - floorP99 : undefined;
      const how = load === 'saturated' ? 'at saturation' : 'one request at a time';
      check(
        `${target}: cached gateway p99 within 1 ms of the floor's, ${how}`,
        slower === undefined
          ? undefined
          : `${slower >= 0 ? '+' : ''}${fmt(slower)} ms (${fmt(cachedP99 ?? 0)} vs ${fmt(floorP99 ?? 0)} ms)`,
        slower !== undefined && slower <= 1,
      );
    }
    // Permissions: the caching verifier decides a requirement from memory, at most 5 % more gateway CPU per request.
    const requirementCpu = cpu('cached-requirement');
    const requirementCost = requirementCpu && cachedCpu && requirementCpu / cachedCpu;
    check(
      `${target}: cached gateway CPU/request with a permission requirement ≤ 1.05× without`,
      requirementCost === undefined
        ? undefined
        : `${fmt(requirementCost)}× (${fmt(requirementCpu ?? 0, 1)} vs ${fmt(cachedCpu ?? 0, 1)} µs)`,
      requirementCost !== undefined && requirementCost <= 1.05,
    );
    const [cachedKeyServer, plainKeyServer] = [keyServer('cached'), keyServer('plain')];
    const share = cachedKeyServer !== undefined && plainKeyServer ? cachedKeyServer / plainKeyServer : undefined;
    check(
      `${target}: key server CPU per gateway request with the cache < 1 % of the plain verifier's`,
      share === undefined
        ? undefined
        : `${fmt(share * 100, 3)} % (${fmt(cachedKeyServer ?? 0, 3)} vs ${fmt(plainKeyServer ?? 0, 1)} µs)`,
      share !== undefined && share < 0.01,
    );
  }
}
