import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPOSITORY = fileURLToPath(new URL('../../../../', import.meta.url));
const DEPCRUISE = fileURLToPath(new URL('../../node_modules/.bin/depcruise', import.meta.url));

/** The sources of every package of the workspace (pnpm-workspace.yaml): `src` of apps/* and packages/*, and spec. */
const SOURCES = [
  ...['apps', 'packages'].flatMap((group) =>
    readdirSync(join(REPOSITORY, group))
      .map((name) => `${group}/${name}/src`)
      .filter((source) => existsSync(join(REPOSITORY, source))),
  ),
  'spec',
];

describe('the import graph (.dependency-cruiser.cjs)', () => {
  it('covers the sources of every package', () => {
    expect(SOURCES).toEqual(expect.arrayContaining(['apps/server/src', 'apps/cli/src', 'packages/store/src', 'spec']));
  });

  it("has no cycle in any package's sources, and the server's layers import one way", async () => {
    const run = promisify(execFile)(
      DEPCRUISE,
      ['--config', '.dependency-cruiser.cjs', '--output-type', 'err-long', ...SOURCES],
      { cwd: REPOSITORY },
    );
    const { stdout } = await run.catch((failure: { stdout?: string; stderr?: string }) => {
      throw new Error(`dependency-cruiser found violations:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
    });

    expect(stdout).toContain('no dependency violations found');
  });
});
