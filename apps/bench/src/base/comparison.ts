/** What the comparison reads of one measured run (a `ScenarioResult`). */
export interface MeasuredRun {
  target: string;
  scenario: string;
  serverCpuMicrosPerRequest: number;
  requestsPerSecond: number;
}

/** One side's figures for a scenario: the mean over its runs. */
export interface SideFigures {
  runs: number;
  cpuMicrosPerRequest: number;
  requestsPerSecond: number;
}

/**
 * A ratio current ÷ base: `ratio` of the two sides' means over the run, and `perRound` each run of the base against
 * the mean of the current's runs right before and right after it (the run order puts the base's between two), so
 * that a steady drift of the machine's speed cancels within each round too; `min` and `max` are their spread.
 */
export interface Ratio {
  ratio: number;
  perRound: number[];
  min: number;
  max: number;
}

/** A scenario on a current target and on its base commit's counterpart. */
export interface BaseComparisonRow {
  target: string;
  baseTarget: string;
  scenario: string;
  current: SideFigures;
  base: SideFigures;
  /** Server CPU per request, current ÷ base: below 1 is cheaper than the base. */
  cpu: Ratio;
  /** Requests per second, current ÷ base: above 1 is faster than the base. */
  requestsPerSecond: Ratio;
}

type Figure = (run: MeasuredRun) => number;
const cpuOf: Figure = (run) => run.serverCpuMicrosPerRequest;
const rateOf: Figure = (run) => run.requestsPerSecond;

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The ratio of `figure`, current ÷ base, from each side's runs with their positions in the whole sequence. */
function ratioOf(
  current: readonly { position: number; run: MeasuredRun }[],
  base: readonly { position: number; run: MeasuredRun }[],
  figure: Figure,
): Ratio {
  const perRound = base.map(({ position, run }) => {
    const before = current.filter((entry) => entry.position < position).at(-1);
    const after = current.find((entry) => entry.position > position);
    const around = [before, after].flatMap((entry) => (entry ? [figure(entry.run)] : []));
    return mean(around) / figure(run);
  });
  const ratio = mean(current.map(({ run }) => figure(run))) / mean(base.map(({ run }) => figure(run)));
  return { ratio, perRound, min: Math.min(...perRound), max: Math.max(...perRound) };
}

/**
 * For each pair of a current target and its base commit's counterpart, and each scenario both measured, the two
 * sides' mean CPU per request and requests per second and the ratios current ÷ base. `runs` are every measured run
 * in the order they ran. Rows come in the order the base's runs first appear (scenario by scenario, as the runs).
 */
export function compareWithBase(
  runs: readonly MeasuredRun[],
  pairs: readonly { current: string; base: string }[],
): BaseComparisonRow[] {
  const positioned = runs.map((run, position) => ({ position, run }));
  const rows: BaseComparisonRow[] = [];
  const done = new Set<string>();
  for (const { run } of positioned) {
    const pair = pairs.find((candidate) => candidate.base === run.target);
    const key = `${run.target}/${run.scenario}`;
    if (!pair || done.has(key)) {
      continue;
    }
    done.add(key);
    const of = (target: string) =>
      positioned.filter((entry) => entry.run.target === target && entry.run.scenario === run.scenario);
    const current = of(pair.current);
    const base = of(pair.base);
    if (current.length === 0) {
      continue;
    }
    const side = (entries: typeof current): SideFigures => ({
      runs: entries.length,
      cpuMicrosPerRequest: mean(entries.map((entry) => cpuOf(entry.run))),
      requestsPerSecond: mean(entries.map((entry) => rateOf(entry.run))),
    });
    rows.push({
      target: pair.current,
      baseTarget: pair.base,
      scenario: run.scenario,
      current: side(current),
      base: side(base),
      cpu: ratioOf(current, base, cpuOf),
      requestsPerSecond: ratioOf(current, base, rateOf),
    });
  }
  return rows;
}
