import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { CONFIG_TABLE_END, CONFIG_TABLE_HEADER, CONFIG_TABLE_START, configTableRows } from '../../src/config-table.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const OPERATIONS_DOC = 'docs/operations.md';
const FIX = 'run `pnpm --filter @apikeys/server docs:config`';

const read = (path: string) => readFileSync(`${REPO_ROOT}${path}`, 'utf8');

/** The cells of each row of a Markdown table, the header and the separator left out. */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** The generated part of docs/operations.md. */
function generatedTable(): string {
  const document = read(OPERATIONS_DOC);
  const start = document.indexOf(CONFIG_TABLE_START);
  const end = document.indexOf(CONFIG_TABLE_END);
  expect(start, `${OPERATIONS_DOC} has the table's markers`).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return document.slice(start + CONFIG_TABLE_START.length, end);
}

describe('the configuration table of docs/operations.md', () => {
  it('has one row per variable of config.ts, with its default, what it accepts and its meaning, and no other', () => {
    const table = generatedTable();
    const header = table.split('\n').find((line) => line.startsWith('|')) ?? '';

    expect(
      header
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
      FIX,
    ).toEqual([...CONFIG_TABLE_HEADER]);
    expect(tableRows(table), FIX).toEqual(configTableRows());
  });

  it('gives as defaults the values loadConfig takes when nothing is set', () => {
    const config = loadConfig({});
    const defaultOf = new Map(configTableRows().map(([name, unset]) => [name, unset]));

    expect(defaultOf.get('`PORT`')).toBe(`\`${config.port}\``);
    expect(defaultOf.get('`HOST`')).toBe(`\`${config.host}\``);
    expect(defaultOf.get('`DATABASE_POOL_SIZE`')).toBe(`\`${config.databasePoolSize}\``);
    expect(defaultOf.get('`SHUTDOWN_GRACE_MS`')).toBe(`\`${config.shutdownGraceMs}\``);
    expect(defaultOf.get('`RATE_LIMIT_PER_MINUTE`')).toBe(`\`${config.rateLimits.perMinute}\``);
    expect(defaultOf.get('`VERIFY_CACHE_TTL_SECONDS`')).toBe(`\`${config.keyCache.ttlMs / 1000}\``);
    expect(config.metrics).toBeUndefined();
    expect(defaultOf.get('`METRICS_PORT`')).toBe('(unset: off)');
  });

  it('is the only table of the variables: the README and the other documents link to it', () => {
    const documents = ['README.md', ...readdirSync(`${REPO_ROOT}docs`).filter((name) => name.endsWith('.md'))];
    const rowOfAVariable = new RegExp(`^\\|\\s*\`(${Object.keys(CONFIG_VARIABLES).join('|')})\``);
    for (const name of documents) {
      const path = name === 'README.md' ? name : `docs/${name}`;
      const text = path === OPERATIONS_DOC ? read(path).replace(generatedTable(), '') : read(path);
      const lines = text.split('\n');
      // A table whose header names a variable (a table of pool sizes, say) is not a row of this one.
      const repeated = lines.filter((line, index) => rowOfAVariable.test(line) && !lines[index + 1]?.startsWith('| -'));
      expect(repeated, `${path} repeats rows of the configuration table`).toEqual([]);
    }
  });
});
