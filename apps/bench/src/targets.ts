import { QUICK_SCENARIOS, REFERENCE_SCENARIOS, SCENARIOS, type Scenario } from './scenarios.js';
import type { Engine } from './seed.js';

/** A server the suite measures: one of the two references, or the real server on one seeded database. */
export type Target =
  | { name: 'bare-http' | 'bare-express'; kind: 'reference'; script: string; scenarios: Scenario[] }
  | { name: string; kind: 'api'; engine: Engine; keys: number; script: string; scenarios: Scenario[] };

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

const SERVER_SCRIPT = 'apps/server/src/main.ts';
const REFERENCES = 'apps/bench/src/references';

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
      apiTargets.push({ name, kind: 'api', engine, keys, script: SERVER_SCRIPT, scenarios });
    }
  }
  // Every figure is compared with the references, so those of the page sizes in use always run.
  const limits = new Set(apiTargets.flatMap((target) => target.scenarios.map((scenario) => scenario.referenceLimit)));
  const references = (name: 'bare-http' | 'bare-express') =>
    REFERENCE_SCENARIOS.filter(
      (scenario) => limits.has(scenario.referenceLimit) || selected(name, [scenario]).length > 0,
    );
  const targets: Target[] = [
    { name: 'bare-http', kind: 'reference', script: `${REFERENCES}/bare-http.ts`, scenarios: references('bare-http') },
    {
      name: 'bare-express',
      kind: 'reference',
      script: `${REFERENCES}/bare-express.ts`,
      scenarios: references('bare-express'),
    },
    ...apiTargets,
  ];
  return targets.filter((target) => target.scenarios.length > 0);
}
