#!/usr/bin/env node
// Production build: `apikeys-bundle <entry.ts>...`, run in a package's folder, bundles each entry point with the
// workspace packages it imports (@apikeys/*, which export TypeScript sources) into one ESM file per entry under
// dist/ (src/main.ts → dist/main.js) that plain `node` runs without the tsx loader. The server builds dist/main.js
// with it, and the benchmark builds its reference servers with it, so that every measured server is built alike.
//
// Every other package stays external: Node resolves it at run time from the package's own node_modules, so it must
// be a dependency of that package (pnpm links nothing else there); the build fails otherwise. Keeping them external
// keeps better-sqlite3's native addon loadable, and keeps each package's own files in CPU profiles, which the
// benchmark's profile summary groups by package.
//
// @apikeys/spec reads openapi.yaml next to its module (import.meta.url); in a bundle that module is the bundle, so
// the build copies the spec next to every bundle that includes it. spec/openapi.yaml stays the only source: dist/ is
// git-ignored.
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const entryPoints = process.argv.slice(2);
if (entryPoints.length === 0) {
  process.stderr.write('usage: apikeys-bundle <entry.ts>...  (run in the folder of the package to build)\n');
  process.exit(2);
}
const { dependencies = {}, name: packageName } = JSON.parse(readFileSync('package.json', 'utf8'));

/** `pino` → `pino`, `@scope/name/sub/path` → `@scope/name`. */
const packageNameOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Leaves Node's built-ins and every package but @apikeys/* to Node's resolution at run time. */
const externalPackages = {
  name: 'external-packages',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, ({ path, importer }) => {
      if (isBuiltin(path)) {
        return { path, external: true };
      }
      const name = packageNameOf(path);
      if (name.startsWith('@apikeys/')) {
        return undefined;
      }
      if (!(name in dependencies)) {
        return {
          errors: [
            {
              text:
                `${importer} imports ${name}, which is not a dependency of ${packageName}: ` +
                'add it to its package.json so that the bundle can resolve it',
            },
          ],
        };
      }
      return { path, external: true };
    });
  },
};

rmSync('dist', { recursive: true, force: true });
const { metafile } = await build({
  entryPoints,
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // For debugging and `node --enable-source-maps`; a plain run never reads the map.
  sourcemap: true,
  metafile: true,
  plugins: [externalPackages],
  logLevel: 'warning',
}).catch(() => process.exit(1)); // esbuild has printed the errors
for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
  const spec = Object.keys(inputs).find((input) => /(^|\/)spec\/index\.ts$/.test(input));
  if (spec) {
    copyFileSync(join(dirname(spec), 'openapi.yaml'), join(dirname(output), 'openapi.yaml'));
  }
}
