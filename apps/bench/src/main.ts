import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GATEWAY_KEYS, type GatewayResult, type GatewayRun, planGateways } from './gateway/scenario.js';
import { checkGoals } from './goals.js';
import { LoadGenerator } from './load.js';
import { summarizeProfile } from './profile-summary.js';
import { type PropagationResult, propagationSummary } from './propagation.js';
import {
  describeMachine,
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

const USAGE = `pnpm bench [options]   (pnpm bench:quick = pnpm bench --quick)

Seeds SQLite and PostgreSQL with keys and as many audit events, starts the real server (one process, and two
replicas on PostgreSQL) and three references (bare node:http, bare Express, Express with express-openapi-validator)
as child processes, and drives each with autocannon from another process. Then the gateway scenario: an Express
gateway protected by the README's requireApiKey in three forms (cached, plain, floor) in front of a key server
(targets gateway-sqlite-<keys>, gateway-postgres-<keys>). Prints a table; writes apps/bench/results/*.json.

  --quick                 10k and 100k keys, 2 s per scenario, a subset of scenarios (about three minutes)
  --duration <s>          seconds measured per scenario (full: 10, quick: 2)
  --warmup <s>            unmeasured seconds of the same load before each scenario (full: 4, quick: 1); longer
                          until every connection has had a response
  --first-warmup <s>      the same before each server's first scenario, while V8 optimizes its code (full: 8, quick: 4)
  --connections <n>       autocannon connections (50)
  --rounds <n>            run every scenario on every target n times in turn (1); every figure the targets judge
                          (each side of a ratio, a p99, a rate) is the mean of its runs
  --sizes <a,b>           the smaller and the larger number of keys (full: 10000,1000000; quick: 10000,100000)
  --only <text>           run only target/scenario names containing <text> (repeatable), e.g. sqlite-1m/list-20,
                          or gateway (a gateway target always runs its three forms: gateway-sqlite-10k/cached);
                          the references' scenarios compared with always run, and so does a variant's base
                          (sqlite-1m/update for sqlite-1m+no-audit/update)
  --skip-postgres         leave out the PostgreSQL targets
  --postgres-url <url>    PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres); the suite creates
                          and drops the databases apikeys_bench_<keys> on it
  --profile <t/s>         run one scenario (e.g. sqlite-1m/list-20, or a reference's: express-validator/list-20)
                          with its server under node --cpu-prof; the profile goes to apps/bench/profiles/ and a
                          summary is printed
  -h, --help`;

const write = (text: string) => process.stdout.write(`${text}\n`);
const note = (text: string) => process.stderr.write(`${text}\n`);

function parseOptions() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'first-warmup': { type: 'string' },
      connections: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '1' },
      sizes: { type: 'string' },
      only: { type: 'string', multiple: true, default: [] },
      'skip-postgres': { type: 'boolean', default: false },
      'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      profile: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const number = (name: string, text: string | undefined, fallback: number) => {
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`--${name} must be a non-negative number (got ${JSON.stringify(text)})`);
    }
    return value;
  };
  const rounds = number('rounds', values.rounds, 1);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new Error(`--rounds must be a whole number ≥ 1 (got ${JSON.stringify(values.rounds)})`);
  }
  const sizes = (values.sizes ?? (values.quick ? '10000,100000' : '10000,1000000')).split(',').map(Number);
  if (sizes.length !== 2 || sizes.some((size) => !Number.isInteger(size) || size < 1000)) {
    throw new Error(`--sizes must be two whole numbers ≥ 1000, e.g. 10000,1000000 (got ${values.sizes})`);
  }
  return {
    help: values.help,
    quick: values.quick,
    durationSeconds: number('duration', values.duration, values.quick ? 2 : 10),
    warmupSeconds: number('warmup', values.warmup, values.quick ? 1 : 4),
    firstWarmupSeconds: number('first-warmup', values['first-warmup'], values.quick ? 4 : 8),
    connections: number('connections', values.connections, 50),
    rounds,
    sizes: sizes as [number, number],
    only: values.profile ? [values.profile] : values.only,
    skipPostgres: values['skip-postgres'],
    postgresUrl: values['postgres-url'],
    profile: values.profile,
  };
}

async function main(): Promise<number> {
  const options = parseOptions();
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
  const goals = checkGoals(results, seeds, options.sizes, propagation, gatewayRuns);
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
  const path = writeReport(join(benchDir, 'results'), report);

  write(`\nmachine: ${formatMachine(machine)}`);
  write(
    `${options.connections} connections, ${options.durationSeconds} s per scenario after ${options.warmupSeconds} s ` +
      `warm-up (${options.firstWarmupSeconds} s before a server's first scenario)` +
      `${options.rounds > 1 ? `, ${options.rounds} rounds` : ''}\n`,
  );
  write(formatResults(results));
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
