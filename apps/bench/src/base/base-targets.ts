import { type ApiTarget, type BaseBuild, SERVER_SCRIPT, type Target } from '../targets.js';

/** The name of a base commit's target: `sqlite-1m@9845cbd`. */
export function baseTargetName(current: string, build: BaseBuild): string {
  return `${current}@${build.label}`;
}

/**
 * Whether a target of the plan gets a counterpart run by the base commit: the real server as one process on one
 * database, with nothing switched on. A variant (`+control`, `+no-audit`, ...) measures a setting of the current
 * code against its own target, and the replicas target measures scale-out: neither is what the base comparison is
 * for, and each would double its runs.
 */
export const comparedWithBase = (target: Target): target is ApiTarget =>
  target.kind === 'api' && target.replicas === 1 && !target.variantOf && !target.build;

/**
 * The plan with the base commit's counterpart of each compared target right after it: the same engine, keys and
 * scenarios (as the plan selected them, `--quick` and `--only` included), run by the base's build. The suite runs
 * the counterpart between two runs of its current target (`runOrder`, its `counterpartOf` in the role of a variant's
 * base), with the same warm-ups and load, `--rounds` times.
 */
export function withBaseTargets(targets: readonly Target[], build: BaseBuild): Target[] {
  return targets.flatMap((target): Target[] => {
    if (!comparedWithBase(target)) {
      return [target];
    }
    const counterpart: ApiTarget = {
      ...target,
      name: baseTargetName(target.name, build),
      build,
      counterpartOf: target.name,
    };
    return [target, counterpart];
  });
}

/** The pairs the base comparison reports: each current target and its base commit's counterpart. */
export function basePairs(targets: readonly Target[]): { current: string; base: string }[] {
  return targets.flatMap((target) =>
    target.kind === 'api' && target.counterpartOf ? [{ current: target.counterpartOf, base: target.name }] : [],
  );
}

/** What the report says of a base comparison, besides its table. */
export function baseNotes(build: BaseBuild, rounds: number): string[] {
  const notes = [
    `base ${build.label}: its server (${build.root}/${SERVER_SCRIPT}) ran on databases seeded by its own bench and ` +
      "store code (the same seed, its own schema); each side's requests were drawn from its own database, and " +
      "verify's secrets were each side's own keys",
    `base ${build.label}: compared are the one-process targets; the variants, the PostgreSQL replicas and the ` +
      'gateway ran on the current code only',
  ];
  if (rounds < 2) {
    notes.push(`base ${build.label}: one round has no spread; --rounds 3 or more tells a ratio from the noise`);
  }
  return notes;
}
