import { describe, expect, it } from 'vitest';
import { compareWithBase, type MeasuredRun } from '../src/base/comparison.js';
import { formatBaseComparison } from '../src/report.js';

/** A run of `scenario` on `target` with the given CPU per request and requests per second. */
const run = (target: string, scenario: string, cpu: number, rate: number): MeasuredRun => ({
  target,
  scenario,
  serverCpuMicrosPerRequest: cpu,
  requestsPerSecond: rate,
});

const pairs = [{ current: 'sqlite-1m', base: 'sqlite-1m@9845cbd' }];

describe('compareWithBase', () => {
  it('takes the mean of each side over its runs and divides current by base', () => {
    const runs = [
      run('sqlite-1m', 'list-20', 100, 1000),
      run('sqlite-1m@9845cbd', 'list-20', 200, 500),
      run('sqlite-1m', 'list-20', 120, 800),
    ];

    const [row] = compareWithBase(runs, pairs);

    expect(row).toMatchObject({
      target: 'sqlite-1m',
      baseTarget: 'sqlite-1m@9845cbd',
      scenario: 'list-20',
      current: { runs: 2, cpuMicrosPerRequest: 110, requestsPerSecond: 900 },
      base: { runs: 1, cpuMicrosPerRequest: 200, requestsPerSecond: 500 },
    });
    expect(row?.cpu.ratio).toBeCloseTo(0.55);
    expect(row?.requestsPerSecond.ratio).toBeCloseTo(1.8);
  });

  it("compares each base run with the current's runs right before and after it, for the spread over the rounds", () => {
    // The machine slows down steadily, and the base costs 1.5× the current at any moment: every base run against
    // the mean of the current's runs on either side of it says so.
    const runs = [
      run('sqlite-1m', 'get', 100, 1000),
      run('sqlite-1m@9845cbd', 'get', 165, 600),
      run('other', 'get', 1, 1),
      run('sqlite-1m', 'get', 120, 900),
      run('sqlite-1m@9845cbd', 'get', 195, 400),
      run('sqlite-1m', 'get', 140, 700),
    ];

    const [row] = compareWithBase(runs, pairs);

    expect(row?.cpu.perRound.map((ratio) => ratio.toFixed(4))).toEqual([(1 / 1.5).toFixed(4), (1 / 1.5).toFixed(4)]);
    expect(row?.cpu.min).toBeCloseTo(1 / 1.5);
    expect(row?.cpu.max).toBeCloseTo(1 / 1.5);
    expect(row?.requestsPerSecond.perRound).toEqual([950 / 600, 800 / 400]);
    expect(row?.requestsPerSecond.min).toBe(950 / 600);
    expect(row?.requestsPerSecond.max).toBe(2);
    expect(row?.cpu.ratio).toBeCloseTo(120 / 180);
  });

  it('takes the one current run there is when the other side of a base run failed', () => {
    const runs = [run('sqlite-1m', 'update', 100, 1000), run('sqlite-1m@9845cbd', 'update', 50, 2000)];

    const [row] = compareWithBase(runs, pairs);

    expect(row?.cpu.perRound).toEqual([2]);
    expect(row?.requestsPerSecond.perRound).toEqual([0.5]);
  });

  it('has a row per scenario both sides ran, in the order the base ran them, and none for other targets', () => {
    const runs = [
      run('sqlite-1m', 'list-20', 100, 1000),
      run('sqlite-1m@9845cbd', 'list-20', 100, 1000),
      run('sqlite-1m+control', 'list-20', 100, 1000),
      run('sqlite-1m', 'list-20', 100, 1000),
      run('sqlite-1m', 'permission-20', 100, 1000),
      run('sqlite-1m', 'get', 100, 1000),
      run('sqlite-1m@9845cbd', 'get', 100, 1000),
      run('sqlite-1m', 'get', 100, 1000),
    ];

    const rows = compareWithBase(runs, pairs);

    expect(rows.map((row) => `${row.target}/${row.scenario}`)).toEqual(['sqlite-1m/list-20', 'sqlite-1m/get']);
  });

  it('has no rows without a base', () => {
    expect(compareWithBase([run('sqlite-1m', 'list-20', 100, 1000)], [])).toEqual([]);
  });
});

describe('formatBaseComparison', () => {
  it("prints each side's means, the ratios and their range over the rounds (a dash for one round)", () => {
    const runs = [
      run('sqlite-1m', 'list-20', 400, 2000),
      run('sqlite-1m@9845cbd', 'list-20', 500, 1600),
      run('sqlite-1m', 'list-20', 400, 2000),
      run('sqlite-1m@9845cbd', 'list-20', 400, 2000),
      run('sqlite-1m', 'list-20', 400, 2000),
      run('sqlite-1m', 'get', 300, 3000),
      run('sqlite-1m@9845cbd', 'get', 300, 3000),
      run('sqlite-1m', 'get', 300, 3000),
    ];

    const lines = formatBaseComparison(compareWithBase(runs, pairs)).split('\n');

    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      'target',
      'scenario',
      'rounds',
      'cpu µs/req',
      'base',
      'cur÷base',
      'range',
      'req/s',
      'base',
      'cur÷base',
      'range',
    ]);
    expect(lines[2]?.split(/\s+/)).toEqual([
      'sqlite-1m',
      'list-20',
      '2',
      '400',
      '450',
      '0.89',
      '0.80–1.00',
      '2,000',
      '1,800',
      '1.11',
      '1.00–1.25',
    ]);
    expect(lines[3]?.split(/\s+/)).toEqual([
      'sqlite-1m',
      'get',
      '1',
      '300',
      '300',
      '1.00',
      '–',
      '3,000',
      '3,000',
      '1.00',
      '–',
    ]);
  });
});
