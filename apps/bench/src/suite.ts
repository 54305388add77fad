import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION } from '@apikeys/api-types';
import type { StartedServerProcess as ServerProcess } from '@apikeys/server/testing';
import type { BenchDatabase } from './audit-trail-off.js';
import {
  type GatewayResult,
  type GatewayRun,
  type GatewaySettings,
  type GatewayTarget,
  runGateway,
} from './gateway/scenario.js';
import type { LoadGenerator, LoadResult } from './load.js';
import { cpuMicros, peakRssBytes, postgresCpuMicros, resetPeakRss, rssBytes } from './procfs.js';
import { measurePropagation, PROPAGATION_TRIALS, type PropagationResult } from './propagation.js';
import { runOrder } from './run-order.js';
import { type ReferenceScenarioName, SCENARIOS, type Scenario } from './scenarios.js';
import {
  type Engine,
  KNOWN_KEYS,
  type KnownKeys,
  type Samples,
  type SeededDatabase,
  seedKnownKeys,
  seedPostgres,
  seedSqlite,
} from './seed.js';
import { startServer } from './server-process.js';
import { API_TARGET_ENV, type Target } from './targets.js';

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
}

export interface SeedResult {
  engine: Engine;
  keys: number;
  /** Seconds the keys took. */
  seconds: number;
  /** Audit events seeded after the keys, and the seconds they took. */
  events: number;
  eventSeconds: number;
  /** Keys created with known secrets for verification (0 when none ran there), and the seconds they took. */
  knownKeys: number;
  knownKeySeconds: number;
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

/** A seeded database: its engine and number of keys. */
interface DatabaseId {
  engine: Engine;
  keys: number;
}

/** Seeds each database once, on first use, and drops them all at the end. */
class Databases {
  private readonly seeded = new Map<string, Promise<SeededDatabase>>();
  private readonly known = new Map<string, Promise<KnownKeys>>();
  readonly seeds: SeedResult[] = [];

  constructor(private readonly settings: SuiteSettings) {}

  get(engine: Engine, keys: number): Promise<SeededDatabase> {
    const key = `${engine}-${keys}`;
    let database = this.seeded.get(key);
    if (!database) {
      this.settings.onProgress(`seeding ${keys} keys and as many audit events into ${engine}…`);
      database = (
        engine === 'sqlite' ? seedSqlite(this.settings.workDir, keys) : seedPostgres(this.settings.postgresUrl, keys)
      ).then((seeded) => {
        const { events, seedSeconds: seconds, eventSeedSeconds: eventSeconds } = seeded;
        this.seeds.push({ engine, keys, seconds, events, eventSeconds, knownKeys: 0, knownKeySeconds: 0 });
        this.settings.onProgress(
          `seeded ${keys} keys into ${engine} in ${seconds.toFixed(1)} s, ${events} audit events in ` +
            `${eventSeconds.toFixed(1)} s`,
        );
        return seeded;
      });
      this.seeded.set(key, database);
    }
    return database;
  }

  /** The keys with known secrets of a seeded database, created on first use (after its samples were taken). */
  knownKeys({ engine, keys }: DatabaseId): Promise<KnownKeys> {
    const key = `${engine}-${keys}`;
    let known = this.known.get(key);
    if (!known) {
      known = this.get(engine, keys).then(async (database) => {
        this.settings.onProgress(`creating ${KNOWN_KEYS} keys with known secrets in ${engine} (${keys} keys)…`);
        const created = await seedKnownKeys(database.databaseUrl);
        const seed = this.seeds.find((entry) => entry.engine === engine && entry.keys === keys);
        if (seed) {
          seed.knownKeys = created.keys.length;
          seed.knownKeySeconds = created.seconds;
        }
        this.settings.onProgress(`created ${created.keys.length} keys in ${engine} in ${created.seconds.toFixed(1)} s`);
        return created;
      });
      this.known.set(key, known);
    }
    return known;
  }

  async dropAll(): Promise<void> {
    for (const database of this.seeded.values()) {
      await (await database.catch(() => undefined))?.drop();
    }
    this.seeded.clear();
  }
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
    const database = await databases.get('sqlite', REFERENCE_DATABASE_KEYS);
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
    const database = await databases.get(target.engine, target.keys);
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
      servers.push(await startServer(command, settings.repoRoot, logFile));
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

/** Measures one scenario on one running target; a failure is reported and the suite goes on. */
async function runScenario(
  { target, servers, headers, samples, startRss, database }: RunningTarget,
  scenario: Scenario,
  load: LoadGenerator,
  settings: SuiteSettings,
  warmupSeconds: number,
): Promise<void> {
  const died = servers.map((server) => server.exitReason()).find(Boolean);
  if (died) {
    settings.onFailure(`${target.name}/${scenario.name} not run: ${died}`);
    return;
  }
  const change = target.kind === 'api' ? target.body : undefined;
  const scenarioBodies = scenario.bodies?.(samples);
  const bodies = change ? scenarioBodies?.map(change) : scenarioBodies;
  const job = {
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
  const verifying = targets.find((target) => target.kind === 'api' && needsKnownKeys(target));
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
    for (const target of targets) {
      const { engine, keys } = databaseOf(target);
      await databases.get(engine, keys);
    }
    for (const gateway of settings.gateways) {
      await databases.get(gateway.engine, gateway.keys);
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
    const warmedUp = new Set<RunningTarget>();
    const baseOf = (entry: RunningTarget | undefined) =>
      entry?.target.kind === 'api' ? entry.target.variantOf : undefined;
    for (const name of scenarioOrder(targets)) {
      const jobs = running.flatMap((entry) => {
        const scenario = entry.target.scenarios.find((candidate) => candidate.name === name);
        return scenario ? [{ entry, scenario }] : [];
      });
      // A base target and its variants compare: every run of theirs gets the same warm-up, the longer one when one
      // of their servers has not run yet (otherwise a new variant's first warm-up would be longer than the base's).
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
        const database = await databases.get(gateway.engine, gateway.keys);
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
