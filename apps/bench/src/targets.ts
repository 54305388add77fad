import { LATEST_API_VERSION } from '@apikeys/api-types';
import { QUICK_SCENARIOS, REFERENCE_SCENARIOS, SCENARIOS, type Scenario } from './scenarios.js';
import type { Engine } from './seed.js';

/** The references, cheapest first: every figure of the real server is also printed as a ratio to each. */
export const REFERENCE_NAMES = ['bare-http', 'bare-express', 'express-validator'] as const;
export type ReferenceName = (typeof REFERENCE_NAMES)[number];

/**
 * A server the suite measures: one of the references, or the real server on one seeded database, as one process
 * or as several replicas sharing the database (the load is spread over them round-robin).
 */
export type Target =
  | { name: ReferenceName; kind: 'reference'; script: string; scenarios: Scenario[] }
  | {
      name: string;
      kind: 'api';
      engine: Engine;
      keys: number;
      replicas: number;
      script: string;
      scenarios: Scenario[];
      /** Settings on top of the suite's (a variant: the same server with a feature switched on). */
      env?: Record<string, string>;
      /** Request headers on top of the suite's (a variant: the same requests in another API version). */
      headers?: Record<string, string>;
      /** The target a variant is the same server as, but for `env`. */
      variantOf?: string;
    };

/**
 * The server's settings in every API target: rate limiting off, since the load comes from one admin key. A variant
 * switches a feature on and runs a scenario right after the plain target, so that the two compare.
 */
export const API_TARGET_ENV = { RATE_LIMIT_PER_MINUTE: '0' } as const;

/**
 * Features measured against the same server without them, in the same run, on the larger SQLite store. `control` is
 * the same server with nothing switched on, in a process of its own: how far two processes of one server differ.
 */
export const VARIANTS = [
  {
    suffix: 'control',
    description: 'nothing switched on: the same server in another process, for the noise between processes',
    env: {},
    scenarios: ['list-20'],
  },
  {
    suffix: 'ratelimited',
    description: 'the in-memory rate limiter on, with a limit that never refuses',
    env: { RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BURST: '1000000000' },
    scenarios: ['list-20'],
  },
  {
    suffix: 'metrics',
    description: 'Prometheus metrics on, on a listener of their own (a free port), not scraped during the run',
    env: { METRICS_PORT: '0' },
    scenarios: ['list-20'],
  },
  {
    suffix: 'latest-version',
    description: 'the same requests in the latest API version (its key shape, expiry computed per key)',
    env: {},
    headers: { 'vendor-version': LATEST_API_VERSION },
    scenarios: ['list-20'],
  },
] as const satisfies readonly {
  suffix: string;
  description: string;
  env: Record<string, string>;
  headers?: Record<string, string>;
  scenarios: readonly string[];
}[];

/** The name of a variant of a target: `sqlite-1m+ratelimited`. */
export function variantTargetName(base: string, suffix: string): string {
  return `${base}+${suffix}`;
}

export interface PlanOptions {
  quick: boolean;
  /** The smaller and the larger number of seeded keys. */
  sizes: readonly [number, number];
  postgres: boolean;
  /** Keep only `target/scenario` names containing one of these; all when empty. */
  only: readonly string[];
}

/** 10000 → "10k", 1000000 → "1m". */
export function sizeLabel(keys: number): string {
  if (keys % 1_000_000 === 0) {
    return `${keys / 1_000_000}m`;
  }
  return keys % 1000 === 0 ? `${keys / 1000}k` : String(keys);
}

/** The name of the target that runs POSTGRES_REPLICAS servers on the PostgreSQL database of `keys` keys. */
export function replicasTargetName(keys: number): string {
  return `postgres-${sizeLabel(keys)}-x${POSTGRES_REPLICAS}`;
}

// Bundles built by `pnpm bench` before it runs (the server's `build` and this package's), run with plain Node.
const SERVER_SCRIPT = 'apps/server/dist/main.js';
const REFERENCES = 'apps/bench/dist/references';
/** How many replicas of the server share the larger PostgreSQL database in the replicas target. */
export const POSTGRES_REPLICAS = 2;
/** What the replicas run: the writes that one server cannot scale past, and a read for comparison. */
const REPLICA_SCENARIOS = ['list-20', 'update', 'update-hot'];

/** The targets to run, in order, each with the scenarios selected by mode and `--only`. */
export function planTargets(options: PlanOptions): Target[] {
  const selected = (target: string, scenarios: readonly Scenario[], quickNames?: string[]) =>
    scenarios.filter(
      (scenario) =>
        (!quickNames || quickNames.includes(scenario.name)) &&
        (options.only.length === 0 || options.only.some((part) => `${target}/${scenario.name}`.includes(part))),
    );
  const apiTargets: Target[] = [];
  const engines: Engine[] = options.postgres ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const engine of engines) {
    for (const [index, keys] of options.sizes.entries()) {
      const name = `${engine}-${sizeLabel(keys)}`;
      const quickNames = options.quick ? QUICK_SCENARIOS[`${engine}-${index === 0 ? 'small' : 'large'}`] : undefined;
      const scenarios = selected(name, SCENARIOS, quickNames);
      apiTargets.push({ name, kind: 'api', engine, keys, replicas: 1, script: SERVER_SCRIPT, scenarios });
    }
  }
  const largeSqlite = apiTargets.find(
    (target) => target.kind === 'api' && target.engine === 'sqlite' && target.keys === options.sizes[1],
  );
  // Quick runs (2 s a scenario) are too short to tell a few per cent apart: the variants run in full runs only.
  for (const variant of options.quick ? [] : VARIANTS) {
    if (largeSqlite?.kind === 'api') {
      const name = variantTargetName(largeSqlite.name, variant.suffix);
      const scenarios = selected(name, SCENARIOS, [...variant.scenarios]);
      const headers = 'headers' in variant ? { headers: variant.headers } : {};
      apiTargets.push({ ...largeSqlite, name, env: variant.env, ...headers, variantOf: largeSqlite.name, scenarios });
    }
  }
  if (options.postgres) {
    // PostgreSQL lets several stateless replicas share one database: two of them, on the larger store.
    const keys = options.sizes[1];
    const name = replicasTargetName(keys);
    const quickNames = options.quick ? QUICK_SCENARIOS['postgres-replicas'] : undefined;
    const scenarios = selected(name, SCENARIOS, quickNames ?? REPLICA_SCENARIOS);
    apiTargets.push({
      name,
      kind: 'api',
      engine: 'postgres',
      keys,
      replicas: POSTGRES_REPLICAS,
      script: SERVER_SCRIPT,
      scenarios,
    });
  }
  // Every figure is compared with the references, so those of the page sizes in use always run.
  const limits = new Set(apiTargets.flatMap((target) => target.scenarios.map((scenario) => scenario.referenceLimit)));
  const references: Target[] = REFERENCE_NAMES.map((name) => ({
    name,
    kind: 'reference',
    script: `${REFERENCES}/${name}.js`,
    scenarios: REFERENCE_SCENARIOS.filter(
      (scenario) => limits.has(scenario.referenceLimit) || selected(name, [scenario]).length > 0,
    ),
  }));
  const targets = [...references, ...apiTargets];
  return targets.filter((target) => target.scenarios.length > 0);
}
