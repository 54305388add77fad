/**
 * The order in which one scenario's jobs run, each on its own target, in the plan's order. A variant is compared
 * with its base target, which the plan puts right before its variants: the base runs the scenario again right after
 * its last variant, and the comparison takes the mean of the base's runs, so that a steady drift of the machine's
 * speed cancels out (and, for writes, so does what the first run wrote). With several rounds the whole sequence
 * repeats (a base never runs twice in a row), and every comparison takes the mean of each side's runs: a page at 1M
 * keys against the same page at 10k, as well as a variant against its base.
 */
export function runOrder<Job extends { entry: { target: { name: string } } }>(
  jobs: readonly Job[],
  baseOf: (entry: Job['entry'] | undefined) => string | undefined,
  rounds: number,
): Job[] {
  const order: Job[] = [];
  const add = (job: Job) => {
    if (order.at(-1) !== job) {
      order.push(job);
    }
  };
  for (let round = 0; round < rounds; round++) {
    for (const [index, job] of jobs.entries()) {
      add(job);
      const base = baseOf(job.entry);
      const baseJob = jobs.find((candidate) => candidate.entry.target.name === base);
      if (baseJob && baseOf(jobs[index + 1]?.entry) !== base) {
        add(baseJob);
      }
    }
  }
  return order;
}
