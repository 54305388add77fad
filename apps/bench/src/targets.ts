import { LATEST_API_VERSION } from '@apikeys/api-types';
import { type BenchDatabase, type SwitchBack, switchAuditTrailOff } from './audit-trail-off.js';
import { QUICK_SCENARIOS, REFERENCE_SCENARIOS, SCENARIOS, type Scenario, VERIFY_SCENARIOS } from './scenarios.js';
import { type Engine, KNOWN_KEYS } from './seed.js';

/** The references, cheapest first: every figure of the real server is also printed as a ratio to each. */
export const REFERENCE_NAMES = ['bare-http', 'bare-express', 'express-validator'] as const;
export type ReferenceName = (typeof REFERENCE_NAMES)[number];

/** What each reference serves: the first pages, and verification for the one that validates against the spec. */
const SERVED_BY: Record<ReferenceName, readonly Scenario[]> = {
  'bare-http': REFERENCE_SCENARIOS,
  'bare-express': REFERENCE_SCENARIOS,
  'express-validator': [...REFERENCE_SCENARIOS, ...VERIFY_SCENARIOS],
};

/** A build of another commit of this repository, whose server the bench runs next to the current one (`--base`). */
export interface BaseBuild {
  /** The full commit hash. */
  commit: string;
  /** The short hash, in target names: `sqlite-1m@9845cbd`. */
  label: string;
  /** The clean checkout of the commit, installed and built (base/base-build.ts). */
  root: string;
}

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
      /** A change to the database for the time of each run (a variant: the same server on a changed database). */
      duringRuns?: DatabaseChange;
      /** Request headers on top of the suite's (a variant: the same requests in another API version). */
      headers?: Record<string, string>;
      /** A change to each request body (a variant: the same requests with one more field). */
      body?: (body: string) => string;
      /** The target a variant is the same server as, but for `env`, `headers`, `body` and `duringRuns`. */
      variantOf?: string;
      /** The base commit's build that runs this target, on databases seeded by its own code (`--base`). */
      build?: BaseBuild;
      /** The current code's target a base commit's target is compared with (`sqlite-1m` for `sqlite-1m@9845cbd`). */
      counterpartOf?: string;
    };

/** A target of the real server. */
export type ApiTarget = Extract<Target, { kind: 'api' }>;

/**
 * The target whose runs a target's are compared with, run right before and after them (`runOrder`): a variant's
 * base target, or the current code's target of a base commit's counterpart.
 */
export function comparedWith(target: Target | undefined): string | undefined {
  return target?.kind === 'api' ? (target.variantOf ?? target.counterpartOf) : undefined;
}

/**
 * The server's settings in every API target: rate limiting off, since the load comes from one admin key. A variant
 * switches a feature on (or changes the database) and runs a scenario between two runs of the plain target, so that
 * the two compare.
 */
export const API_TARGET_ENV = { RATE_LIMIT_PER_MINUTE: '0' } as const;

/**
 * Changes a target's database before one of its runs; what it returns undoes the change after the run, before the
 * base target runs on the same database again.
 */
export type DatabaseChange = (database: BenchDatabase) => Promise<SwitchBack>;

/** A feature measured against the same server without it, in the same run, on the larger store of `engines`. */
export interface Variant {
  suffix: string;
  description: string;
  env: Record<string, string>;
  headers?: Record<string, string>;
  body?: (body: string) => string;
  duringRuns?: DatabaseChange;
  engines: readonly Engine[];
  scenarios: readonly string[];
  /** What quick mode runs (2 s a scenario is too short to tell a few per cent apart: most run in full runs only). */
  quickScenarios: readonly string[];
}

/**
 * The entries of the verification cache in the `verify-cache-full` variant: the known keys that `verify` fills it
 * with, after which every secret of `verify-miss` replaces the least recently used entry.
 */
export const VERIFY_CACHE_FULL_ENTRIES = KNOWN_KEYS;

/**
 * The permission requirement of the `+requirement` variants' verifications, in the spec's example form: the known
 * keys (`KNOWN_KEY_PERMISSIONS`) satisfy it.
 */
export const SATISFIED_REQUIREMENT = 'documents.read AND (documents.write OR admin.*)';
/** The same shape of requirement, which the known keys do not satisfy (`INSUFFICIENT_PERMISSIONS`). */
export const UNSATISFIED_REQUIREMENT = 'documents.read AND (billing.write OR admin.*)';

/** A verification body with a permission requirement added. */
const withRequirement = (requirement: string) => (body: string) =>
  JSON.stringify({ ...(JSON.parse(body) as object), permissions: requirement });

/**
 * The variants. `control` is the same server with nothing switched on, in a process of its own: how far two
 * processes of one server differ. `no-audit` is the other way round: the same server on its database with the audit
 * trail switched off by a trigger of the bench's (`switchAuditTrailOff`), to measure what recording an update costs.
 * `verify-cache-full` keeps every entry of its verification cache until the cache is full (times to live of an
 * hour), for its RSS once full. `requirement` and `requirement-denied` send `verify`'s requests with a permission
 * requirement that the keys satisfy, or do not: what evaluating one costs.
 */
export const VARIANTS: readonly Variant[] = [
  {
    suffix: 'control',
    description: 'nothing switched on: the same server in another process, for the noise between processes',
    env: {},
    engines: ['sqlite'],
    scenarios: ['list-20'],
    quickScenarios: [],
  },
  {
    suffix: 'ratelimited',
    description: 'the in-memory rate limiter on, with a limit that never refuses',
    env: { RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BURST: '1000000000' },
    engines: ['sqlite'],
    scenarios: ['list-20'],
    quickScenarios: [],
  },
  {
    suffix: 'metrics',
    description: 'Prometheus metrics on, on a listener of their own (a free port), not scraped during the run',
    env: { METRICS_PORT: '0' },
    engines: ['sqlite'],
    scenarios: ['list-20'],
    quickScenarios: [],
  },
  {
    suffix: 'latest-version',
    description: 'the same requests in the latest API version (its key shape, expiry computed per key)',
    env: {},
    headers: { 'vendor-version': LATEST_API_VERSION },
    engines: ['sqlite'],
    scenarios: ['list-20'],
    quickScenarios: [],
  },
  {
    suffix: 'no-audit',
    description: "the audit trail off by a trigger of the bench's that drops every event's insert",
    env: {},
    duringRuns: switchAuditTrailOff,
    // With the trail, without, with again, on one database: each run with it adds its updates' events to the trail
    // (a per cent or two of 1M), so the run without, in between, sees the trail at the mean size of the two.
    engines: ['sqlite', 'postgres'],
    scenarios: ['update', 'update-hot'],
    // In quick runs too, as the check that the comparison runs (its 2 s figures are too noisy to judge 15 % by).
    quickScenarios: ['update'],
  },
  {
    suffix: 'verify-cache-full',
    description: `verification with a cache of ${VERIFY_CACHE_FULL_ENTRIES} entries, kept until the cache is full`,
    env: {
      VERIFY_CACHE_MAX_KEYS: String(VERIFY_CACHE_FULL_ENTRIES),
      VERIFY_CACHE_TTL_SECONDS: '3600',
      VERIFY_CACHE_NOT_FOUND_TTL_SECONDS: '3600',
    },
    engines: ['sqlite', 'postgres'],
    scenarios: ['verify', 'verify-miss'],
    quickScenarios: ['verify', 'verify-miss'],
  },
  {
    suffix: 'requirement',
    description: `verify with "permissions": "${SATISFIED_REQUIREMENT}", which every key satisfies`,
    env: {},
    body: withRequirement(SATISFIED_REQUIREMENT),
    engines: ['sqlite', 'postgres'],
    scenarios: ['verify'],
    quickScenarios: ['verify'],
  },
  {
    suffix: 'requirement-denied',
    description: `verify with "permissions": "${UNSATISFIED_REQUIREMENT}", which no key satisfies`,
    env: {},
    body: withRequirement(UNSATISFIED_REQUIREMENT),
    engines: ['sqlite', 'postgres'],
    scenarios: ['verify'],
    quickScenarios: [],
  },
];

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
export const SERVER_SCRIPT = 'apps/server/dist/main.js';
const REFERENCES = 'apps/bench/dist/references';
/** How many replicas of the server share the larger PostgreSQL database in the replicas target. */
export const POSTGRES_REPLICAS = 2;
/** What the replicas run: the writes that one server cannot scale past, and a read for comparison. */
const REPLICA_SCENARIOS = ['list-20', 'update', 'update-hot'];
/** Run on the larger store only: the keys that verification creates would double the smaller one. */
const LARGER_STORE_ONLY = new Set(VERIFY_SCENARIOS.map((scenario) => scenario.name));

/**
 * The targets to run, in order, each with the scenarios selected by mode and `--only`. A target's variants follow it
 * (the suite runs a scenario on the targets in this order, so a base target and its variants run back to back).
 */
export function planTargets(options: PlanOptions): Target[] {
  const selected = (target: string, scenarios: readonly Scenario[], quickNames?: readonly string[]) =>
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
      const storeScenarios =
        index === 0 ? SCENARIOS.filter((scenario) => !LARGER_STORE_ONLY.has(scenario.name)) : SCENARIOS;
      const base: ApiTarget = { name, kind: 'api', engine, keys, replicas: 1, script: SERVER_SCRIPT, scenarios: [] };
      const variants: ApiTarget[] = [];
      for (const variant of keys === options.sizes[1] ? VARIANTS : []) {
        if (variant.engines.includes(engine)) {
          const variantName = variantTargetName(name, variant.suffix);
          const scenarios = selected(
            variantName,
            SCENARIOS,
            options.quick ? variant.quickScenarios : variant.scenarios,
          );
          const headers = variant.headers ? { headers: variant.headers } : {};
          const duringRuns = variant.duringRuns ? { duringRuns: variant.duringRuns } : {};
          const body = variant.body ? { body: variant.body } : {};
          variants.push({
            ...base,
            name: variantName,
            env: variant.env,
            ...headers,
            ...duringRuns,
            ...body,
            variantOf: name,
            scenarios,
          });
        }
      }
      // A variant is measured against its base: the base runs what its variants run, whatever `--only` says.
      const compared = new Set(variants.flatMap((variant) => variant.scenarios.map((scenario) => scenario.name)));
      const own = selected(name, storeScenarios, quickNames);
      base.scenarios = SCENARIOS.filter((scenario) => own.includes(scenario) || compared.has(scenario.name));
      apiTargets.push(base, ...variants);
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
  // Every figure is compared with the references, so the scenarios of theirs in use always run.
  const compared = new Set(apiTargets.flatMap((target) => target.scenarios.map((scenario) => scenario.reference)));
  const references: Target[] = REFERENCE_NAMES.map((name) => ({
    name,
    kind: 'reference',
    script: `${REFERENCES}/${name}.js`,
    scenarios: SERVED_BY[name].filter(
      (scenario) => compared.has(scenario.reference) || selected(name, [scenario]).length > 0,
    ),
  }));
  const targets = [...references, ...apiTargets];
  return targets.filter((target) => target.scenarios.length > 0);
}
