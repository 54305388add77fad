import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION } from '@apikeys/api-types';
import type { StartedServerProcess as ServerProcess } from '@apikeys/server/testing';
import type { BenchDatabase } from './audit-trail-off.js';
import { type DatabaseId, Databases, type SeedResult } from './databases.js';
import {
  type GatewayResult,
  type GatewayRun,
  type GatewaySettings,
  type GatewayTarget,
  runGateway,
} from './gateway/scenario.js';
import { type LoadGenerator, type LoadJob, type LoadResult, requestBody } from './load.js';
import { cpuMicros, peakRssBytes, postgresCpuMicros, resetPeakRss, rssBytes } from './procfs.js';
import { measurePropagation, PROPAGATION_TRIALS, type PropagationResult } from './propagation.js';
import { runOrder } from './run-order.js';
import { type ReferenceScenarioName, SCENARIOS, type Scenario } from './scenarios.js';
import type { Engine, Samples } from './seed.js';
import { startServer } from './server-process.js';
import { API_TARGET_ENV, comparedWith, type Target } from './targets.js';

/** One measured scenario on one target. CPU figures are the server process's user + system time, all threads. */
export interface ScenarioResult extends LoadResult {
  target: string;
  scenario: string;
  description: string;
  engine: Engine | 'reference';
  keys: number | null;
  /** How many server processes shared the load (replicas of the real server on one PostgreSQL database). */
  replicas: number;
  /** The references' scenario this one is compared with. */
  reference: ReferenceScenarioName;
  /** Summed over the replicas when there are several. */
  serverCpuMicrosPerRequest: number;
  /** PostgreSQL's own processes, per request (PostgreSQL targets only). */
  databaseCpuMicrosPerRequest: number | null;
  /**
   * Peak RSS during the scenario (the largest replica's); since the server started when the kernel cannot reset
   * the peak.
   */
  serverPeakRssBytes: number;
  peakRssScope: 'scenario' | 'process';
  /** RSS of the server right after it started listening, before any load (the largest replica's). */
  serverStartRssBytes: number;
  /** A few log lines of failed requests, when there were any. */
  failureSamples: string[];
  /** The base commit whose build was measured (`--base`); absent for the current code. */
  commit?: string;
}

export interface SuiteSettings extends GatewaySettings {
  /** The PostgreSQL server to create the bench database on (used only when the plan has PostgreSQL targets). */
  postgresUrl: string;
  /** Starts every server under `node --cpu-prof` writing here. */
  cpuProfileDir?: string | undefined;
  /** Called with each result as soon as it is measured. */
  onResult(result: ScenarioResult): void;
  /** Called with the propagation figure of each target of several replicas, once its scenarios are done. */
  onPropagation(result: PropagationResult): void;
  /** The gateway targets, run once every other target's scenarios are done (gateway/scenario.ts). */
  gateways: readonly GatewayTarget[];
  /** Called with each run of a gateway's form as soon as it is measured. */
  onGatewayResult(result: GatewayResult): void;
  /** Called with everything measured on a gateway target, once it is done. */
  onGateway(run: GatewayRun): void;
  /** Called when a scenario cannot be measured (its server died, say); the suite goes on with the next. */
  onFailure(message: string): void;
  /** Called with what the report should say besides the figures (a scenario the base commit does not serve). */
  onNote(message: string): void;
}

/** Log lines of requests that did not end in 2xx (the server's request log has a `status` field). */
function failedRequestLines(log: string, limit: number): string[] {
  const lines: string[] = [];
  for (const line of log.split('\n')) {
    const match = /"status":(\d{3})/.exec(line);
    if (match && !match[1]?.startsWith('2')) {
      lines.push(line);
      if (lines.length === limit) {
        break;
      }
    }
  }
  return lines;
}

async function measure(
  target: Target,
  scenario: Scenario,
  servers: readonly ServerProcess[],
  job: Parameters<LoadGenerator['run']>[0],
  load: LoadGenerator,
  startRss: number,
): Promise<ScenarioResult> {
  for (const server of servers) {
    server.takeLog();
  }
  const postgres = target.kind === 'api' && target.engine === 'postgres';
  const serversCpu = () => servers.reduce((sum, server) => sum + cpuMicros(server.pid), 0);
  let peakScope: ScenarioResult['peakRssScope'] = 'process';
  let cpu = 0;
  let databaseCpu = 0;
  let peak = 0;
  const result = await load.run(job, {
    open() {
      const reset = servers.map((server) => resetPeakRss(server.pid));
      peakScope = reset.every(Boolean) ? 'scenario' : 'process';
      cpu = -serversCpu();
      databaseCpu = postgres ? -postgresCpuMicros() : 0;
    },
    close() {
      cpu += serversCpu();
      databaseCpu += postgres ? postgresCpuMicros() : 0;
      peak = Math.max(...servers.map((server) => peakRssBytes(server.pid)));
    },
  });
  const failed =
    result.non2xx + result.errors > 0
      ? servers.flatMap((server) => failedRequestLines(server.takeLog(), 5)).slice(0, 5)
      : [];
  const requests = Math.max(result.requests, 1);
  return {
    target: target.name,
    scenario: scenario.name,
    description: scenario.description,
    engine: target.kind === 'api' ? target.engine : 'reference',
    keys: target.kind === 'api' ? target.keys : null,
    replicas: target.kind === 'api' ? target.replicas : 1,
    reference: scenario.reference,
    ...result,
    serverCpuMicrosPerRequest: cpu / requests,
    databaseCpuMicrosPerRequest: postgres ? databaseCpu / requests : null,
    serverPeakRssBytes: peak,
    peakRssScope: peakScope,
    serverStartRssBytes: startRss,
    failureSamples: failed,
    ...(target.kind === 'api' && target.build && { commit: target.build.label }),
  };
}

/** A target whose servers are up, with what its requests need. */
interface RunningTarget {
  target: Target;
  servers: ServerProcess[];
  headers: Record<string, string>;
  /** Keys and events sampled over the target's database, for the scenarios' paths (none for the references). */
  samples: Samples;
  startRss: number;
  /** The database the servers opened (none for the references). */
  database?: BenchDatabase;
}

const needsKnownKeys = (target: Target) => target.scenarios.some((scenario) => scenario.knownKeys);

/**
 * Starts the servers of a target on its (already seeded) database. The references verify the known keys of
 * `referenceKeys`' database.
 */
async function startTarget(
  target: Target,
  databases: Databases,
  settings: SuiteSettings,
  referenceKeys: DatabaseId,
): Promise<RunningTarget> {
  const headers: Record<string, string> = { 'vendor-version': API_VERSION, 'content-type': 'application/json' };
  let env: Record<string, string>;
  let samples: Samples = { keyIds: [], events: [], secrets: [] };
  let opened: BenchDatabase | undefined;
  if (target.kind === 'reference') {
    // The references serve the same first 1000 keys the real server lists, so the bodies are the same size.
    const database = await databases.get(REFERENCE_DATABASE);
    const itemsFile = join(settings.workDir, 'reference-items.json');
    writeFileSync(itemsFile, JSON.stringify(database.firstItems));
    env = { BENCH_PAGE_FILE: itemsFile, PORT: '0', HOST: '127.0.0.1' };
    if (needsKnownKeys(target)) {
      // The same secrets and answers as the real server's, so that both verify the same requests.
      const known = await databases.knownKeys(referenceKeys);
      const verificationsFile = join(settings.workDir, `${target.name}-verifications.json`);
      writeFileSync(verificationsFile, JSON.stringify(known.keys));
      env.BENCH_VERIFICATIONS_FILE = verificationsFile;
      samples = { ...samples, secrets: known.keys.map((key) => key.secret) };
    }
    headers['x-api-key'] = database.adminSecret;
  } else {
    const database = await databases.get(target);
    opened = database;
    samples = database.samples;
    if (needsKnownKeys(target)) {
      const known = await databases.knownKeys(target);
      samples = { ...samples, secrets: known.keys.map((key) => key.secret) };
    }
    env = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.databaseUrl,
      LOG_LEVEL: 'info',
      ...API_TARGET_ENV,
      ...target.env,
    };
    headers['x-api-key'] = database.adminSecret;
    Object.assign(headers, target.headers);
  }
  const replicas = target.kind === 'api' ? target.replicas : 1;
  const servers: ServerProcess[] = [];
  try {
    for (let replica = 0; replica < replicas; replica++) {
      const logFile = join(settings.workDir, `${target.name}${replicas > 1 ? `-${replica}` : ''}.log`);
      const command = { script: target.script, env, cpuProfileDir: settings.cpuProfileDir };
      const root = target.kind === 'api' && target.build ? target.build.root : settings.repoRoot;
      servers.push(await startServer(command, root, logFile));
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    throw error;
  }
  for (const server of servers) {
    const rss = Math.round(rssBytes(server.pid) / 1e6);
    settings.onProgress(`${target.name}: listening at ${server.baseUrl} (pid ${server.pid}, RSS ${rss} MB)`);
  }
  const startRss = Math.max(...servers.map((server) => rssBytes(server.pid)));
  return { target, servers, headers, samples, startRss, ...(opened && { database: opened }) };
}

/** The load of one scenario on one running target. */
function loadJobOf(
  { target, servers, headers, samples }: RunningTarget,
  scenario: Scenario,
  settings: SuiteSettings,
  warmupSeconds: number,
): LoadJob {
  const change = target.kind === 'api' ? target.body : undefined;
  const scenarioBodies = scenario.bodies?.(samples);
  const bodies = change ? scenarioBodies?.map(change) : scenarioBodies;
  return {
    urls: servers.map((server) => server.baseUrl),
    connections: settings.connections,
    warmupSeconds,
    durationSeconds: settings.durationSeconds,
    method: scenario.method,
    headers: { ...headers, ...scenario.headers },
    paths: scenario.paths(samples),
    bodyTemplate: scenario.bodyTemplate,
    bodies,
    warmupRequests: scenario.warmUpEveryBody ? bodies?.length : undefined,
  };
}

/** How long the one request that tells whether a base commit's server serves a scenario may take. */
const SERVED_CHECK_TIMEOUT_MS = 30_000;

/**
 * Leaves out of a base commit's target the scenarios its server does not serve (a filter or an API version it did
 * not have yet): the first request of each, as its load would send it, must be answered 2xx. The current code's
 * target still runs them, without a comparison; the report says which were left out and what the base answered.
 */
async function leaveOutUnserved(entry: RunningTarget, settings: SuiteSettings): Promise<void> {
  const served: Scenario[] = [];
  for (const scenario of entry.target.scenarios) {
    const job = loadJobOf(entry, scenario, settings, 0);
    let answer: string;
    try {
      const response = await fetch(`${job.urls[0]}${job.paths[0]}`, {
        method: job.method,
        headers: job.headers,
        body: requestBody(job)(0) ?? null,
        signal: AbortSignal.timeout(SERVED_CHECK_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.ok) {
        served.push(scenario);
        continue;
      }
      answer = `${response.status} ${text.slice(0, 200)}`;
    } catch (error) {
      answer = error instanceof Error ? error.message : String(error);
    }
    settings.onNote(`${entry.target.name}/${scenario.name} not run: the base answered its first request ${answer}`);
  }
  entry.target = { ...entry.target, scenarios: served };
}

/** Measures one scenario on one running target; a failure is reported and the suite goes on. */
async function runScenario(
  running: RunningTarget,
  scenario: Scenario,
  load: LoadGenerator,
  settings: SuiteSettings,
  warmupSeconds: number,
): Promise<void> {
  const { target, servers, startRss, database } = running;
  const died = servers.map((server) => server.exitReason()).find(Boolean);
  if (died) {
    settings.onFailure(`${target.name}/${scenario.name} not run: ${died}`);
    return;
  }
  const job = loadJobOf(running, scenario, settings, warmupSeconds);
  try {
    const duringRuns = target.kind === 'api' ? target.duringRuns : undefined;
    const switchBack = duringRuns && database ? await duringRuns(database) : undefined;
    let result: ScenarioResult;
    try {
      result = await measure(target, scenario, servers, job, load, startRss);
    } finally {
      await switchBack?.();
    }
    settings.onResult(result);
  } catch (error) {
    const reason =
      servers.map((server) => server.exitReason()).find(Boolean) ??
      (error instanceof Error ? error.message : String(error));
    settings.onFailure(`${target.name}/${scenario.name} failed: ${reason}`);
  }
}

/** The keys of the SQLite database whose first page the references serve. */
const REFERENCE_DATABASE_KEYS = 10_000;

const REFERENCE_DATABASE: DatabaseId = { engine: 'sqlite', keys: REFERENCE_DATABASE_KEYS };

/** The database a target's servers open; the references' is the one whose first page they serve. */
const databaseOf = (target: Target): DatabaseId => (target.kind === 'api' ? target : REFERENCE_DATABASE);

/**
 * The database whose known keys the references verify: the first the real server verifies in, so that both verify
 * the same secrets; the references' own when the real server verifies in none (a reference's scenario run alone).
 */
function referenceKeysOf(targets: readonly Target[]): DatabaseId {
  const verifying = targets.find((target) => target.kind === 'api' && !target.build && needsKnownKeys(target));
  return verifying ? databaseOf(verifying) : REFERENCE_DATABASE;
}

/** The order scenarios run in: that of SCENARIOS (updates last, as they write), references' among them. */
function scenarioOrder(targets: readonly Target[]): string[] {
  const names = [...new Set(targets.flatMap((target) => target.scenarios.map((scenario) => scenario.name)))];
  const rank = (name: string) => {
    const index = SCENARIOS.findIndex((scenario) => scenario.name === name);
    return index === -1 ? SCENARIOS.length : index;
  };
  return names.sort((a, b) => rank(a) - rank(b));
}

/**
 * Seeds every database first (seeding must not overlap a measurement), starts every target's servers, then runs
 * the scenarios one after the other, each on every target that has it, back to back. This machine's speed drifts by
 * 10-20 % over minutes, so the figures a target compares (a page at 1M keys against the same page at 10k, the server
 * against the references) are measured within a minute or two of each other, not a quarter of an hour apart. Idle
 * servers cost nothing meanwhile. Returns the seed times; results go to `settings.onResult` as they come.
 */
export async function runSuite(targets: Target[], load: LoadGenerator, settings: SuiteSettings): Promise<SeedResult[]> {
  const databases = new Databases(settings);
  const running: RunningTarget[] = [];
  try {
    const referenceKeys = referenceKeysOf(targets);
    // The base commit's databases first: its PostgreSQL seeding drops a database of the current's name.
    const byBase = (target: Target) => target.kind === 'api' && target.build !== undefined;
    for (const target of [...targets.filter(byBase), ...targets.filter((target) => !byBase(target))]) {
      await databases.get(databaseOf(target));
    }
    for (const gateway of settings.gateways) {
      await databases.get(gateway);
    }
    for (const target of targets.filter(needsKnownKeys)) {
      await databases.knownKeys(target.kind === 'api' ? target : referenceKeys);
    }
    // Started side by side: each server's start-up is a second or two of CPU that no measurement needs to wait for
    // in turn.
    const started = await Promise.allSettled(
      targets.map((target) => startTarget(target, databases, settings, referenceKeys)),
    );
    for (const outcome of started) {
      if (outcome.status === 'fulfilled') {
        running.push(outcome.value);
      }
    }
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) {
      throw failed.reason;
    }
    for (const entry of running) {
      if (entry.target.kind === 'api' && entry.target.build) {
        await leaveOutUnserved(entry, settings);
      }
    }
    const warmedUp = new Set<RunningTarget>();
    const baseOf = (entry: RunningTarget | undefined) => comparedWith(entry?.target);
    for (const name of scenarioOrder(targets)) {
      const jobs = running.flatMap((entry) => {
        const scenario = entry.target.scenarios.find((candidate) => candidate.name === name);
        return scenario ? [{ entry, scenario }] : [];
      });
      // A base target, its variants and its base commit's counterpart compare: every run of theirs gets the same
      // warm-up, the longer one when one of their servers has not run yet (otherwise a new variant's first warm-up
      // would be longer than the base's).
      const groupOf = (entry: RunningTarget) => baseOf(entry) ?? entry.target.name;
      const warmups = new Map<string, number>();
      for (const { entry } of jobs) {
        const own = warmedUp.has(entry) ? settings.warmupSeconds : settings.firstWarmupSeconds;
        warmups.set(groupOf(entry), Math.max(warmups.get(groupOf(entry)) ?? 0, own));
      }
      const run = ({ entry, scenario }: { entry: RunningTarget; scenario: Scenario }) => {
        warmedUp.add(entry);
        const warmup = warmups.get(groupOf(entry)) ?? settings.firstWarmupSeconds;
        return runScenario(entry, scenario, load, settings, warmup);
      };
      for (const job of runOrder(jobs, baseOf, settings.rounds)) {
        await run(job);
      }
    }
    // Once the load is over: a deactivation through one replica, timed until the other's verification says so.
    for (const { target, servers, headers } of running) {
      if (target.kind === 'api' && target.replicas > 1) {
        settings.onProgress(`${target.name}: timing ${PROPAGATION_TRIALS} deactivations from one replica to the other`);
        settings.onPropagation(await measurePropagation(target.name, servers, headers));
      }
    }
    for (const gateway of settings.gateways) {
      try {
        const database = await databases.get(gateway);
        settings.onGateway(await runGateway(gateway, database, load, settings, settings.onGatewayResult));
      } catch (error) {
        settings.onFailure(`${gateway.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } finally {
    await Promise.all(running.flatMap((entry) => entry.servers.map((server) => server.stop())));
    await databases.dropAll();
  }
  return databases.seeds;
}
