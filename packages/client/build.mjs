// Builds dist/ for publishing. dist/index.js is one ESM bundle of src/ together with the workspace code it imports
// (the facts generated from the spec in @apikeys/api-types), so that the published package imports nothing but
// openapi-fetch at run time; tsc writes the declarations next to it. Inside the monorepo nothing uses dist/.
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  format: 'esm',
  // Node and browsers alike: the code uses only fetch, Request, Response, Headers, AbortController and timers.
  platform: 'neutral',
  target: 'es2022',
  external: ['openapi-fetch'],
  logLevel: 'warning',
}).catch(() => process.exit(1)); // esbuild has printed the errors
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const { status } = (await import('node:child_process')).spawnSync(
  process.execPath,
  [tsc, '-p', 'tsconfig.build.json'],
  {
    stdio: 'inherit',
  },
);
process.exit(status ?? 1);
