#!/usr/bin/env node
// Sums the vitest JSON reports of every workspace package into one closing line, `N passed, N failed`.
// Usage: `test-summary.mjs --clean` removes stale reports before a run; `test-summary.mjs <runner exit code>`
// prints the totals afterwards and exits non-zero when the runner failed, a test failed or a report is missing.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const REPORT = join('test-results', 'vitest.json');

function packagesWithTests() {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(root, group, entry.name))
      .filter((dir) => {
        const manifest = join(dir, 'package.json');
        return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).scripts?.test;
      }),
  );
}

if (process.argv[2] === '--clean') {
  for (const dir of packagesWithTests()) {
    rmSync(join(dir, 'test-results'), { recursive: true, force: true });
  }
  process.exit(0);
}

const runnerCode = Number(process.argv[2] ?? 0);
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const dir of packagesWithTests()) {
  const file = join(dir, REPORT);
  if (!existsSync(file)) {
    missing.push(dir.slice(root.length));
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  // A file that fails to load counts as a failure even when it ran no test.
  failed += report.testResults.filter(
    (result) => result.status === 'failed' && result.assertionResults.length === 0,
  ).length;
}
if (missing.length > 0) {
  process.stdout.write(`no test report from: ${missing.join(', ')}\n`);
}
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(runnerCode !== 0 || failed > 0 || missing.length > 0 ? 1 : 0);
