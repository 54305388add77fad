import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrationNames } from '../testing/index.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../src/migrations/', import.meta.url));
/** The files of shipped migrations: `0001-initial.ts`, ... */
const MIGRATION_FILES = readdirSync(MIGRATIONS_DIR).filter((file) => /^\d{4}-.+\.ts$/.test(file));

describe('migrations', () => {
  it('are registered one per file, in the order of their file names', async () => {
    expect(MIGRATION_FILES.length).toBeGreaterThan(0);
    expect(await migrationNames()).toEqual(MIGRATION_FILES.map((file) => file.replace(/\.ts$/, '')).sort());
  });

  it.each(MIGRATION_FILES)('%s imports nothing from another migration, so that it stays as it shipped', (file) => {
    const source = readFileSync(`${MIGRATIONS_DIR}${file}`, 'utf8');
    const specifiers = [...source.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');

    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((specifier) => /(^|\/)\d{4}-[^/]*$/.test(specifier))).toEqual([]);
  });
});
