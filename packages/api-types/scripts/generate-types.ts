/**
 * Writes the TypeScript types of each API version: src/generated/openapi-<version>.d.ts (openapi-typescript, from
 * the version's document in spec/versions/) and src/generated/versions.ts, which names them. With `--check` it
 * writes nothing and exits 1 when a committed file differs from what the spec gives.
 *
 *   tsx scripts/generate-types.ts [--check]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { specVersions, versionDocumentPath } from '@apikeys/spec';

const GENERATED = fileURLToPath(new URL('../src/generated/', import.meta.url));
const check = process.argv.includes('--check');
// The package exports no path to its command; it lies next to the package's own package.json.
const cli = join(dirname(createRequire(import.meta.url).resolve('openapi-typescript/package.json')), 'bin/cli.js');
const versions = specVersions();

/** `YYYY-MM-DD` → `vYYYY_MM_DD`: the name of a version in code. */
const codeName = (version: string) => `v${version.replaceAll('-', '_')}`;
const typesFile = (version: string) => `openapi-${version}.d.ts`;

let stale = false;
for (const version of versions) {
  const args = [cli, versionDocumentPath(version), '-o', join(GENERATED, typesFile(version))];
  try {
    execFileSync(process.execPath, check ? [...args, '--check'] : args, { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    stale = true;
  }
}

const imports = versions.map((v) => `import type * as ${codeName(v)} from './openapi-${v}.js';\n`).join('');
const entries = versions
  .map(
    (v) =>
      `  ${JSON.stringify(v)}: {\n    paths: ${codeName(v)}.paths;\n    components: ${codeName(v)}.components;\n` +
      `    operations: ${codeName(v)}.operations;\n  };\n`,
  )
  .join('');
const barrel = `/**
 * This file was generated from spec/openapi.yaml by scripts/generate-types.ts.
 * Do not make direct changes to the file.
 */

${imports}
/** The generated types of each API version, one namespace per version (\`v2023_06_01.components\`, ...). */
export type { ${versions.map(codeName).join(', ')} };

/** The generated types of each API version, by version. */
export interface VersionTypes {
${entries}}

/** Each API version by its name in code. */
export const API_VERSION_NAMES = {
${versions.map((v) => `  ${codeName(v)}: ${JSON.stringify(v)},\n`).join('')}} as const;
`;
const barrelPath = join(GENERATED, 'versions.ts');
if (!check) {
  writeFileSync(barrelPath, barrel);
} else if (!existsSync(barrelPath) || readFileSync(barrelPath, 'utf8') !== barrel) {
  process.stderr.write(`${barrelPath} is out of date with spec/openapi.yaml: run pnpm generate\n`);
  stale = true;
}
const expected = new Set(['versions.ts', 'spec-facts.ts', ...versions.map(typesFile)]);
const extra = readdirSync(GENERATED).filter((file) => !expected.has(file));
if (extra.length > 0) {
  process.stderr.write(`${GENERATED} holds files no version generates: ${extra.join(', ')}\n`);
  stale = true;
}
process.exit(stale ? 1 : 0);
