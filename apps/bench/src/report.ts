import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { BaseComparisonRow, Ratio } from './base/comparison.js';
import type { SeedResult } from './databases.js';
import type { GatewayRun } from './gateway/scenario.js';
import type { GoalCheck } from './goals.js';
import { type PropagationResult, propagationSummary } from './propagation.js';
import type { ScenarioResult } from './suite.js';

/** The machine a run was measured on. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  kernel: string;
  sqlite: string;
  postgres: string | null;
}

/** Everything one run measured, as written to the JSON file. */
export interface RunReport {
  startedAt: string;
  mode: 'full' | 'quick' | 'profile';
  settings: {
    connections: number;
    rounds: number;
    durationSeconds: number;
    warmupSeconds: number;
    firstWarmupSeconds: number;
    sizes: readonly number[];
  };
  machine: Machine;
  seeds: SeedResult[];
  results: ScenarioResult[];
  /** Issue 16: how long a change through one replica took to reach another's verification. */
  propagation: PropagationResult[];
  /** The gateway scenario: each form's runs, the propagation to the cached gateway, memory per feed subscriber. */
  gateways: GatewayRun[];
  goals: GoalCheck[];
  notes: string[];
  /** Scenarios that could not be measured, and why. */
  failures: string[];
  /** The comparison with a base commit's build (`--base`); absent without it. */
  base?: BaseReport;
}

/** The current code against a base commit's build: each scenario both ran, current ÷ base. No target judges it. */
export interface BaseReport {
  commit: string;
  label: string;
  /** The checkout the base was built and run in. */
  checkout: string;
  comparison: BaseComparisonRow[];
}

async function postgresVersion(url: string | undefined): Promise<string | null> {
  if (!url) {
    return null;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>('show server_version');
    return result.rows[0]?.server_version ?? null;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Describes this machine: CPU, cores, memory, Node, kernel, SQLite, and PostgreSQL when one is used. */
export async function describeMachine(postgresUrl: string | undefined): Promise<Machine> {
  const memory = new Database(':memory:');
  const sqlite = (memory.prepare('select sqlite_version() as v').get() as { v: string }).v;
  memory.close();
  let kernel = release();
  try {
    kernel = execFileSync('uname', ['-srm'], { encoding: 'utf8' }).trim();
  } catch {
    // uname is missing: the release alone will do.
  }
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel,
    sqlite,
    postgres: await postgresVersion(postgresUrl),
  };
}

const int = (value: number) => Math.round(value).toLocaleString('en-US');
const dec = (value: number, digits: number) => value.toFixed(digits);
const ratio = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '–' : dec(value, 2));

/** A plain-text table with right-aligned columns except the first two. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** The results table, each figure also as a ratio to the references' scenario it is compared with. */
export function formatResults(results: readonly ScenarioResult[]): string {
  const reference = (target: string, scenario: string) =>
    results.find((result) => result.target === target && result.scenario === scenario && result.keys === null);
  const rows = results.map((result) => {
    const http = reference('bare-http', result.reference);
    const express = reference('bare-express', result.reference);
    const validator = reference('express-validator', result.reference);
    const failures = result.non2xx + result.errors;
    return [
      result.target,
      result.scenario,
      int(result.requestsPerSecond),
      ratio(http && result.requestsPerSecond / http.requestsPerSecond),
      ratio(express && result.requestsPerSecond / express.requestsPerSecond),
      dec(result.latencyMs.p50, 1),
      dec(result.latencyMs.p99, 1),
      dec(result.latencyMs.max, 1),
      int(result.serverCpuMicrosPerRequest),
      ratio(http && result.serverCpuMicrosPerRequest / http.serverCpuMicrosPerRequest),
      ratio(express && result.serverCpuMicrosPerRequest / express.serverCpuMicrosPerRequest),
      ratio(validator && result.serverCpuMicrosPerRequest / validator.serverCpuMicrosPerRequest),
      result.databaseCpuMicrosPerRequest === null ? '–' : int(result.databaseCpuMicrosPerRequest),
      int(result.serverPeakRssBytes / 1e6),
      failures === 0 ? '0' : `${result.non2xx}/${result.errors} !!`,
    ];
  });
  return table(
    [
      'target',
      'scenario',
      'req/s',
      'vs http',
      'vs expr',
      'p50 ms',
      'p99 ms',
      'max ms',
      'cpu µs/req',
      'cpu×http',
      'cpu×expr',
      'cpu×val',
      'db µs/req',
      'RSS MB',
      'non2xx/err',
    ],
    rows,
  );
}

/**
 * The gateway's runs, each with the ratio of its gateway CPU per request to the floor's mean on the same target;
 * then, per target, the propagation to the cached gateway and the key server's memory per feed subscriber.
 */
export function formatGateways(runs: readonly GatewayRun[]): string {
  const rows = runs.flatMap(({ results }) => {
    const floors = results.filter((result) => result.form === 'floor' && result.load === 'saturated');
    const floorCpu = floors.reduce((sum, result) => sum + result.gatewayCpuMicrosPerRequest, 0) / floors.length;
    return results.map((result) => [
      result.target,
      result.form,
      result.load,
      int(result.requestsPerSecond),
      dec(result.latencyMs.p50, 2),
      dec(result.latencyMs.p99, 2),
      dec(result.gatewayCpuMicrosPerRequest, 1),
      ratio(result.gatewayCpuMicrosPerRequest / floorCpu),
      dec(result.keyServerCpuMicrosPerRequest, 2),
      result.databaseCpuMicrosPerRequest === null ? '–' : dec(result.databaseCpuMicrosPerRequest, 2),
      int(result.gatewayPeakRssBytes / 1e6),
      result.non2xx + result.errors === 0 ? '0' : `${result.non2xx}/${result.errors} !!`,
    ]);
  });
  const header = [
    'target',
    'form',
    'load',
    'req/s',
    'p50 ms',
    'p99 ms',
    'gw cpu µs/req',
    'gw cpu×floor',
    'key srv cpu µs/req',
    'db µs/req',
    'gw RSS MB',
    'non2xx/err',
  ];
  const lines = runs.map(({ target, propagation, feedMemory }) => {
    const { medianMs, maxMs } = propagationSummary(propagation);
    return (
      `${target}: propagation to the cached gateway median ${dec(medianMs, 1)} ms, max ${dec(maxMs, 1)} ms ` +
      `(${propagation.delaysMs.length} trials, ${propagation.timedOut} timed out); key server RSS per change feed ` +
      `subscriber ${int(feedMemory.bytesPerSubscriber)} bytes (${feedMemory.subscribers} subscribers, ` +
      `${dec(feedMemory.rssBeforeBytes / 1e6, 1)} → ${dec(feedMemory.rssAfterBytes / 1e6, 1)} MB)`
    );
  });
  return [table(header, rows), '', ...lines].join('\n');
}

/** The spread of a ratio over the rounds, `min–max`; a dash for one round, which has none. */
const spread = ({ perRound, min, max }: Ratio) => (perRound.length < 2 ? '–' : `${dec(min, 2)}–${dec(max, 2)}`);

/**
 * The base comparison: per target and scenario, each side's mean CPU per request and requests per second, the ratio
 * current ÷ base of each, and the range of the per-round ratios.
 */
export function formatBaseComparison(rows: readonly BaseComparisonRow[]): string {
  return table(
    ['target', 'scenario', 'rounds', 'cpu µs/req', 'base', 'cur÷base', 'range', 'req/s', 'base', 'cur÷base', 'range'],
    rows.map((row) => [
      row.target,
      row.scenario,
      String(row.base.runs),
      int(row.current.cpuMicrosPerRequest),
      int(row.base.cpuMicrosPerRequest),
      ratio(row.cpu.ratio),
      spread(row.cpu),
      int(row.current.requestsPerSecond),
      int(row.base.requestsPerSecond),
      ratio(row.requestsPerSecond.ratio),
      spread(row.requestsPerSecond),
    ]),
  );
}

/** Seed times: the keys, then as many audit events, then the keys with known secrets when verification ran. */
export function formatSeeds(seeds: readonly SeedResult[]): string {
  return table(
    ['engine', 'keys', 'seconds', 'keys/s', 'audit events', 'seconds', 'events/s', 'known keys', 'seconds'],
    seeds.map((seed) => [
      seed.commit ? `${seed.engine}@${seed.commit}` : seed.engine,
      int(seed.keys),
      dec(seed.seconds, 1),
      int(seed.keys / seed.seconds),
      int(seed.events),
      dec(seed.eventSeconds, 1),
      int(seed.events / seed.eventSeconds),
      int(seed.knownKeys),
      seed.knownKeys === 0 ? '–' : dec(seed.knownKeySeconds, 1),
    ]),
  );
}

/** The targets of the issues next to the measured figures. */
export function formatGoals(goals: readonly GoalCheck[]): string {
  return table(
    ['status', 'target', 'measured'],
    goals.map((goal) => [goal.status === 'not met' ? 'NOT MET' : goal.status, goal.goal, goal.measured]),
  );
}

/** The machine, in one line. */
export function formatMachine(machine: Machine): string {
  const postgres = machine.postgres ? `, PostgreSQL ${machine.postgres}` : '';
  return (
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB; Node ${machine.node}; ` +
    `${machine.kernel}; SQLite ${machine.sqlite}${postgres}`
  );
}

/** Writes `<timestamp>.json` and `latest.json` into `dir`; returns the timestamped path. */
export function writeReport(dir: string, report: RunReport): string {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const path = join(dir, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, json);
  writeFileSync(join(dir, 'latest.json'), json);
  return path;
}
