import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API_VERSIONS, MAX_REQUEST_BODY_BYTES } from '../src/index.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Every source file whose facts must come from the spec: the tracked code of every package, outside the spec
 * itself, the generated files and the tests (which may spell out the values they expect).
 */
function sourceFiles(): string[] {
  const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return tracked
    .split('\n')
    .filter((file) => /\.(?:[cm]?[jt]s)$/.test(file))
    .filter((file) => !file.startsWith('spec/') && !file.includes('/generated/') && !file.includes('/node_modules/'))
    .filter((file) => !/(?:^|\/)test\//.test(file) && !/\.test(?:-d)?\.ts$/.test(file));
}

/** The spellings of the facts that code must read from the spec (or the generated facts) instead. */
const COPIES: [string, RegExp][] = [
  ...API_VERSIONS.map((version): [string, RegExp] => [`the API version ${version}`, new RegExp(version)]),
  [`the body limit ${MAX_REQUEST_BODY_BYTES}`, new RegExp(`\\b${MAX_REQUEST_BODY_BYTES}\\b|1024 \\* 1024|1_048_576`)],
  ['the body limit in words', /\b1 MiB\b/],
];

describe('spec facts are never copied into code', () => {
  const files = sourceFiles();

  it('finds the source files', () => {
    expect(files).toContain('apps/server/src/app.ts');
    expect(files).toContain('packages/client/src/client.ts');
    expect(files.some((file) => file.includes('/test/'))).toBe(false);
  });

  it.each(COPIES)('no source file spells out %s', (_, pattern) => {
    const offenders = files.filter((file) => pattern.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
