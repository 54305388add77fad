// Builds dist/ for publishing. dist/index.js is one ESM bundle of src/ together with the workspace code it imports
// (the facts generated from the spec in @apikeys/api-types), so that the published package imports nothing but its
// dependencies (openapi-fetch, lru-cache, eventsource-parser) at run time. Its declarations are one file too,
// dist/index.d.ts: tsc writes them into dist/types/, and rollup-plugin-dts bundles them with the generated types they
// import, so that they name no workspace package.
// Inside the monorepo nothing uses dist/.
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  format: 'esm',
  // Node and browsers alike: the code uses only fetch, Request, Response, Headers, AbortController and timers (the
  // caching verifier, Node only, loads node:crypto when it is created, by a specifier no bundler follows).
  platform: 'neutral',
  target: 'es2022',
  // The package's dependencies, which npm installs next to it.
  external: ['openapi-fetch', 'lru-cache', 'eventsource-parser'],
  logLevel: 'warning',
}).catch(() => process.exit(1)); // esbuild has printed the errors
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const { spawnSync } = await import('node:child_process');
/** Runs tsc with these arguments; exits on failure (tsc has printed the errors). */
function runTsc(args) {
  const { status } = spawnSync(process.execPath, [tsc, ...args], { stdio: 'inherit' });
  if (status !== 0) {
    process.exit(status ?? 1);
  }
}
runTsc(['-p', 'tsconfig.build.json']);
// The declarations of @apikeys/api-types, which it keeps as TypeScript sources (just in time, no build of its own).
const apiTypesIndex = createRequire(import.meta.url).resolve('@apikeys/api-types');
const apiTypesDeclarations = 'dist/types/api-types';
runTsc([
  ...['--declaration', '--emitDeclarationOnly', '--noEmit', 'false', '--skipLibCheck'],
  ...['--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--strict'],
  ...['--rootDir', dirname(apiTypesIndex), '--outDir', apiTypesDeclarations, apiTypesIndex],
]);
// tsc emits no copy of a declaration file: the generated ones (openapi-*.d.ts) join the emitted ones as they are.
cpSync(dirname(apiTypesIndex), apiTypesDeclarations, {
  recursive: true,
  filter: (path) => !/\.ts$/.test(path) || /\.d\.ts$/.test(path),
});
const declarations = await rollup({
  input: 'dist/types/index.d.ts',
  plugins: [
    {
      name: 'api-types-declarations',
      resolveId: (id) => (id === '@apikeys/api-types' ? resolve(apiTypesDeclarations, 'index.d.ts') : null),
    },
    dts({ respectExternal: true }),
  ],
  external: ['openapi-fetch', 'lru-cache', 'eventsource-parser'],
});
await declarations.write({ file: 'dist/index.d.ts', format: 'es' });
rmSync('dist/types', { recursive: true, force: true });
