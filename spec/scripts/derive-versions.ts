/**
 * Writes versions/<version>.yaml: the document of each API version, derived from openapi.yaml (see versions.ts).
 * With `--check` it writes nothing and exits 1 when a committed document differs from what the source gives.
 *
 *   tsx scripts/derive-versions.ts [--check]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { specVersions, versionDocumentPath, versionDocumentText } from '../index.js';

const check = process.argv.includes('--check');
const versions = specVersions();
const folder = dirname(versionDocumentPath(versions[0] ?? ''));
let stale = false;
for (const version of versions) {
  const path = versionDocumentPath(version);
  const text = versionDocumentText(version);
  if (!check) {
    writeFileSync(path, text);
  } else if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
    process.stderr.write(`${path} is out of date with spec/openapi.yaml: run pnpm generate\n`);
    stale = true;
  }
}
const extra = readdirSync(folder).filter((file) => !versions.includes(basename(file, '.yaml')));
if (extra.length > 0) {
  process.stderr.write(`${folder} holds documents of no declared version: ${extra.join(', ')}\n`);
  stale = true;
}
process.exit(stale ? 1 : 0);
