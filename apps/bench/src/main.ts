import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareBaseBuild } from './base/base-build.js';
import { baseNotes, basePairs, comparedWithBase, withBaseTargets } from './base/base-targets.js';
import { compareWithBase } from './base/comparison.js';
import { GATEWAY_KEYS, type GatewayResult, type GatewayRun, planGateways } from './gateway/scenario.js';
import { checkGoals } from './goals.js';
import { LoadGenerator } from './load.js';
import { parseOptions, USAGE } from './options.js';
import { summarizeProfile } from './profile-summary.js';
import { type PropagationResult, propagationSummary } from './propagation.js';
import {
  describeMachine,
  formatBaseComparison,
  formatGateways,
  formatGoals,
  formatMachine,
  formatResults,
  formatSeeds,
  type RunReport,
  writeReport,
} from './report.js';
import { KNOWN_KEYS, postgresReachable } from './seed.js';
import { runSuite, type ScenarioResult } from './suite.js';
import { planTargets } from './targets.js';

const write = (text: string) => process.stdout.write(`${text}\n`);
const note = (text: string) => process.stderr.write(`${text}\n`);

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    write(USAGE);
    return 0;
  }
  const benchDir = fileURLToPath(new URL('..', import.meta.url));
  const repoRoot = join(benchDir, '../..');
  const startedAt = new Date().toISOString();
  const notes: string[] = [];

  let postgres = !options.skipPostgres;
  if (postgres) {
    const reachable = await postgresReachable(options.postgresUrl);
    if (reachable !== true) {
      postgres = false;
      notes.push(`PostgreSQL not reachable at ${options.postgresUrl} (${reachable}): its scenarios were skipped`);
      note(`!! ${notes.at(-1)}`);
    }
  }
  let targets = planTargets({
    quick: options.quick && !options.profile,
    sizes: options.sizes,
    postgres,
    only: options.only,
  });
  if (options.base && !targets.some(comparedWithBase)) {
    throw new Error(
      `--base: the plan has no one-process target of the server to compare (--only ${options.only.join(' ')})`,
    );
  }
  const base = options.base ? await prepareBaseBuild(repoRoot, options.base, note) : undefined;
  if (base) {
    targets = withBaseTargets(targets, base);
  }
  let cpuProfileDir: string | undefined;
  if (options.profile) {
    const [targetName, scenarioName] = options.profile.split('/');
    targets = targets
      .filter((target) => target.name === targetName)
      .map((target) => ({ ...target, scenarios: target.scenarios.filter((s) => s.name === scenarioName) }))
      .filter((target) => target.scenarios.length > 0);
    if (targets.length === 0) {
      throw new Error(`--profile ${options.profile}: no such target/scenario (try sqlite-1m/list-20)`);
    }
    cpuProfileDir = join(benchDir, 'profiles', startedAt.replace(/[:.]/g, '-'));
    mkdirSync(cpuProfileDir, { recursive: true });
  }
  const gateways = options.profile
    ? []
    : planGateways({ quick: options.quick, sizes: options.sizes, postgres, only: options.only });
  if (targets.length + gateways.length === 0) {
    throw new Error(`--only ${options.only.join(' ')}: no scenario matches`);
  }

  const results: ScenarioResult[] = [];
  const propagation: PropagationResult[] = [];
  const gatewayRuns: GatewayRun[] = [];
  const failures: string[] = [];
  const clock = performance.now();
  const elapsed = () => `[${((performance.now() - clock) / 1000).toFixed(0).padStart(4)} s]`;
  const workDir = mkdtempSync(join(tmpdir(), 'apikeys-bench-'));
  const load = LoadGenerator.start();
  let seeds: Awaited<ReturnType<typeof runSuite>>;
  try {
    seeds = await runSuite(targets, load, {
      repoRoot,
      workDir,
      connections: options.connections,
      rounds: options.rounds,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      firstWarmupSeconds: options.firstWarmupSeconds,
      postgresUrl: options.postgresUrl,
      cpuProfileDir,
      onProgress: (message) => note(`${elapsed()} ${message}`),
      onFailure: (message) => {
        failures.push(message);
        note(`!!!!! ${message}`);
      },
      onNote: (message) => {
        notes.push(message);
        note(`${elapsed()} ${message}`);
      },
      onPropagation: (result) => {
        propagation.push(result);
        const { medianMs, maxMs } = propagationSummary(result);
        note(`${elapsed()} ${result.target}: propagation median ${medianMs.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`);
      },
      gateways,
      onGatewayResult: (result: GatewayResult) => {
        note(
          `${elapsed()} ${result.target}/${result.form} (${result.load}): ` +
            `${Math.round(result.requestsPerSecond)} req/s, p99 ${result.latencyMs.p99.toFixed(2)} ms, ` +
            `gateway ${result.gatewayCpuMicrosPerRequest.toFixed(1)} ` +
            `µs CPU/req, key server ${result.keyServerCpuMicrosPerRequest.toFixed(2)} µs CPU/req`,
        );
        if (result.non2xx + result.errors > 0) {
          note(`!!!!! ${result.target}/${result.form}: ${result.non2xx} non-2xx, ${result.errors} errors`);
          note(`!!!!! status codes: ${JSON.stringify(result.statusCodes)}`);
        }
      },
      onGateway: (run) => {
        gatewayRuns.push(run);
      },
      onResult: (result) => {
        results.push(result);
        note(
          `${elapsed()} ${result.target}/${result.scenario}: ${Math.round(result.requestsPerSecond)} req/s, ` +
            `p99 ${result.latencyMs.p99.toFixed(1)} ms, ${Math.round(result.serverCpuMicrosPerRequest)} µs CPU/req ` +
            `(all connections answered after ${result.rampSeconds?.toFixed(1) ?? '> 60'} s)`,
        );
        if (result.non2xx + result.errors > 0) {
          note(
            `!!!!! ${result.target}/${result.scenario}: ${result.non2xx} non-2xx responses, ${result.errors} errors`,
          );
          note(`!!!!! status codes: ${JSON.stringify(result.statusCodes)}`);
          for (const line of result.failureSamples) {
            note(`!!!!!   ${line}`);
          }
        }
      },
    });
  } finally {
    load.stop();
    rmSync(workDir, { recursive: true, force: true });
  }

  const machine = await describeMachine(postgres ? options.postgresUrl : undefined);
  // The targets are the current code's: a base commit's figures are only compared with it.
  const currentResults = results.filter((result) => result.commit === undefined);
  const currentSeeds = seeds.filter((seed) => seed.commit === undefined);
  const goals = checkGoals(currentResults, currentSeeds, options.sizes, propagation, gatewayRuns);
  notes.push(
    'rate limiting is off (RATE_LIMIT_PER_MINUTE=0) for the bench, whose load comes from one admin key; ' +
      'the +ratelimited target runs with the in-memory limiter on and a limit that never refuses',
  );
  if (seeds.some((seed) => seed.knownKeys > 0)) {
    notes.push(
      `verification is called with the bench's admin key; the ${KNOWN_KEYS} keys it verifies were created after ` +
        'seeding (see the seed times), with an audit event each',
    );
  }
  if (options.quick) {
    notes.push(
      `quick mode: the larger store has ${options.sizes[1]} keys and as many audit events; the targets are stated ` +
        'for 1,000,000',
    );
    if (gateways.length > 0) {
      notes.push('quick mode: the gateway runs on the smaller store only; a full run adds the larger one');
    }
  }
  if (gatewayRuns.length > 0) {
    notes.push(
      `the gateway's load cycles through ${GATEWAY_KEYS} valid keys (the floor's, through its one key); the key ` +
        "server's CPU per request is its CPU over the window divided by the gateway's requests",
    );
  }
  const report: RunReport = {
    startedAt,
    mode: options.profile ? 'profile' : options.quick ? 'quick' : 'full',
    settings: {
      connections: options.connections,
      rounds: options.rounds,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      firstWarmupSeconds: options.firstWarmupSeconds,
      sizes: options.sizes,
    },
    machine,
    seeds,
    results,
    propagation,
    gateways: gatewayRuns,
    goals,
    notes,
    failures,
  };
  if (base) {
    report.base = {
      commit: base.commit,
      label: base.label,
      checkout: base.root,
      comparison: compareWithBase(results, basePairs(targets)),
    };
    notes.push(...baseNotes(base, options.rounds));
  }
  const path = writeReport(join(benchDir, 'results'), report);

  write(`\nmachine: ${formatMachine(machine)}`);
  write(
    `${options.connections} connections, ${options.durationSeconds} s per scenario after ${options.warmupSeconds} s ` +
      `warm-up (${options.firstWarmupSeconds} s before a server's first scenario)` +
      `${options.rounds > 1 ? `, ${options.rounds} rounds` : ''}\n`,
  );
  write(formatResults(results));
  if (report.base) {
    write(
      `\ncurrent ÷ base ${report.base.label} (${report.base.commit}), each side's mean over its runs; no target ` +
        "judges these\nrange: the lowest and highest ratio of one base run to the current's runs on either side of " +
        `it\n${formatBaseComparison(report.base.comparison)}`,
    );
  }
  if (gatewayRuns.length > 0) {
    write(`\ngateway (GET /orders behind the README's requireApiKey):\n${formatGateways(gatewayRuns)}`);
  }
  write(`\nseed times:\n${formatSeeds(seeds)}`);
  if (!options.profile) {
    write(`\ntargets:\n${formatGoals(goals)}`);
  }
  for (const line of notes) {
    write(`note: ${line}`);
  }
  write(`\nresults: ${path}`);
  if (cpuProfileDir) {
    // Summarise the largest profile: the server's main thread (a worker thread, if any, writes a small one too).
    const dir = cpuProfileDir;
    const profiles = readdirSync(dir)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => ({ path: join(dir, name), size: statSync(join(dir, name)).size }))
      .sort((a, b) => b.size - a.size);
    for (const [index, profile] of profiles.entries()) {
      write(`\nprofile${index === 0 ? ' (main thread)' : ''}: ${profile.path}`);
    }
    if (profiles[0]) {
      write(`\n${summarizeProfile(profiles[0].path)}`);
    }
  }

  const failed = [...results, ...gatewayRuns.flatMap((run) => run.results)].filter(
    (result) => result.non2xx + result.errors > 0,
  );
  if (failed.length > 0) {
    note(`\n!!!!! ${failed.length} scenario(s) had non-2xx responses or errors: their figures are not valid`);
  }
  for (const failure of failures) {
    note(`!!!!! ${failure}`);
  }
  if (failed.length + failures.length > 0) {
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    note(`bench: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
