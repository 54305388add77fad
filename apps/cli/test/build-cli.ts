import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServerBundle } from '@apikeys/server/testing';

const CLI_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Vitest's global setup: builds the CLI from its sources, as its `build` script does, so that every test runs the
 * bundle that production runs (it starts in a fraction of the time the sources take through tsx); and the server's,
 * which the API commands' tests start.
 */
export function setup(): void {
  buildServerBundle();
  execFileSync(join(CLI_ROOT, 'node_modules', '.bin', 'apikeys-bundle'), ['src/main.ts'], {
    cwd: CLI_ROOT,
    stdio: 'inherit',
  });
}
