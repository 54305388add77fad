/**
 * Writes the configuration table of docs/operations.md from apps/server/src/config.ts:
 * `pnpm --filter @apikeys/server docs:config`. test/unit/config-table.test.ts fails until it has been run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../src/config-table.js';

const OPERATIONS_DOC = fileURLToPath(new URL('../../../docs/operations.md', import.meta.url));

const document = readFileSync(OPERATIONS_DOC, 'utf8');
const updated = withConfigTable(document);
if (updated !== document) {
  writeFileSync(OPERATIONS_DOC, updated);
}
process.stdout.write(`${OPERATIONS_DOC}: ${updated === document ? 'already up to date' : 'table written'}\n`);
