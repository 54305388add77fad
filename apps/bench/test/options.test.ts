import { describe, expect, it } from 'vitest';
import { parseOptions } from '../src/options.js';

describe('parseOptions', () => {
  it('leaves the base out unless --base names one, so that a run without it is what it was', () => {
    const options = parseOptions(['--quick', '--only', 'list-20']);

    expect(options.base).toBeUndefined();
    expect(options).toMatchObject({ quick: true, only: ['list-20'], rounds: 1, sizes: [10000, 100000] });
  });

  it('takes --base with --quick, --only, --rounds, --sizes and --skip-postgres', () => {
    const options = parseOptions([
      '--base',
      '9845cbd',
      '--quick',
      '--only',
      'sqlite-1m/list-20',
      '--only',
      'get',
      '--rounds',
      '3',
      '--sizes',
      '1000,2000',
      '--skip-postgres',
    ]);

    expect(options).toMatchObject({
      base: '9845cbd',
      quick: true,
      only: ['sqlite-1m/list-20', 'get'],
      rounds: 3,
      sizes: [1000, 2000],
      skipPostgres: true,
    });
  });

  it('refuses --base with --profile, and an empty --base', () => {
    expect(() => parseOptions(['--base', 'main', '--profile', 'sqlite-1m/list-20'])).toThrow(
      '--base and --profile do not go together',
    );
    expect(() => parseOptions(['--base', ''])).toThrow('--base needs a commit');
  });

  it('refuses rounds that are not a whole number of at least one', () => {
    expect(() => parseOptions(['--base', 'main', '--rounds', '0'])).toThrow('--rounds must be a whole number ≥ 1');
  });
});
