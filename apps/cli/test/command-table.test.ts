import { readFileSync } from 'node:fs';
import { OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CURSOR_ALIASES } from '../src/list-options.js';
import { buildProgram } from '../src/program.js';

/** Every command that runs something (no subcommands), by its full name: `keys list`. */
function leafCommands(command: Command, prefix: string[] = []): { name: string; command: Command }[] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return sub.commands.length === 0 ? [{ name: path.join(' '), command: sub }] : leafCommands(sub, path);
  });
}

/** The rows of the README's table of commands: command, kind, and what it calls. */
function tableRows(): { command: string; kind: string; calls: string }[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('## Commands and what they call')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\|\s*`([^`]+)`\s*\|\s*(\w+)\s*\|\s*(.+?)\s*\|$/gm)].map(
    ([, command = '', kind = '', calls = '']) => ({
      command,
      kind,
      calls,
    }),
  );
}

const commands = leafCommands(buildProgram());
const rows = tableRows();

describe("the README's table of commands", () => {
  it('names every command of the CLI, once, and no other', () => {
    expect(rows.map((row) => row.command).sort()).toEqual(commands.map(({ name }) => name).sort());
  });

  it.each(rows.filter((row) => row.kind === 'API'))('$command calls an operation of the spec', ({ calls }) => {
    const operationId = /^`(\w+)`/.exec(calls)?.[1] ?? '';

    expect(Object.keys(OPERATION_INTRODUCED_IN)).toContain(operationId);
  });

  it('says of each command whether it is a database or an API command', () => {
    expect(rows.filter((row) => row.kind !== 'database' && row.kind !== 'API')).toEqual([]);
  });
});

describe('the cursor flags', () => {
  const flagsOf = (command: Command) => command.options.map((option) => option.long);
  const paged = commands.filter(({ command }) => flagsOf(command).some((flag) => flag?.startsWith('--after')));

  it('are on the list commands that page', () => {
    expect(paged.map(({ name }) => name).sort()).toEqual(['audit list', 'keys list']);
  });

  it.each(paged)('$name takes --after and --before, and their earlier spellings', ({ command }) => {
    expect(flagsOf(command)).toEqual(
      expect.arrayContaining(['--after', '--before', CURSOR_ALIASES['--after'], CURSOR_ALIASES['--before']]),
    );
  });
});
