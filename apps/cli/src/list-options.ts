import { LIST_LIMIT } from '@apikeys/api-types';
import { type Command, Option } from 'commander';
import { parseInteger } from './arguments.js';

/** The cursors of every list command: `--after` and `--before`, or their older spellings. */
export interface CursorOptions {
  after?: string;
  before?: string;
  /** `--after-id`: the spelling `audit list` had first; scripts rely on it. */
  afterId?: string;
  /** `--before-id`: likewise. */
  beforeId?: string;
}

/** The older spellings of each cursor flag, kept working for the scripts that use them. */
export const CURSOR_ALIASES = { '--after': '--after-id', '--before': '--before-id' } as const;

const HELP_GROUP = 'Cursor options:';

/**
 * Adds `--after <id>` and `--before <id>` to a list command, with their older spellings `--after-id` and
 * `--before-id`. Any two of them are exclusive: a page has one cursor. `noun` is what the command lists (`key`),
 * `idName` names the argument (`api_key_id`), `parse` checks it, and `beforeDetail` adds to the help of `--before`.
 */
export function addCursorOptions(
  command: Command,
  options: { noun: string; idName: string; parse: (value: string) => string; beforeDetail?: string },
): Command {
  const { noun, idName, parse, beforeDetail } = options;
  const cursor = (flag: string, description: string, conflicts: string[]) =>
    new Option(`${flag} <${idName}>`, description).argParser(parse).conflicts(conflicts).helpGroup(HELP_GROUP);
  return command
    .addOption(cursor('--after', `start after (older than) this ${noun}: the next page`, ['before', 'beforeId']))
    .addOption(cursor('--before', `start before (newer than) this ${noun}: the previous page${beforeDetail ?? ''}`, []))
    .addOption(
      cursor(CURSOR_ALIASES['--after'], 'the same as --after (an earlier spelling, kept for scripts)', [
        'after',
        'before',
        'beforeId',
      ]),
    )
    .addOption(
      cursor(CURSOR_ALIASES['--before'], 'the same as --before (an earlier spelling, kept for scripts)', ['before']),
    );
}

/** The cursor of the list query, from whichever spelling was given. */
export function cursorQuery(options: CursorOptions): { after_id?: string; before_id?: string } {
  const after = options.after ?? options.afterId;
  const before = options.before ?? options.beforeId;
  return {
    ...(after === undefined ? {} : { after_id: after }),
    ...(before === undefined ? {} : { before_id: before }),
  };
}

/**
 * `--limit <n>`, the page size of a list command, within the API's bounds; `nouns` is what the command lists
 * (`keys`), and `allPageSize` the page size of its `--all` walk without `--limit`.
 */
export function limitOption(nouns: string, allPageSize: number): Option {
  return new Option(
    '--limit <n>',
    `${nouns} per page, ${LIST_LIMIT.minimum} to ${LIST_LIMIT.maximum} (default: ${LIST_LIMIT.default}; with --all, ` +
      `the page size of the walk: ${allPageSize})`,
  ).argParser(parseInteger(LIST_LIMIT.minimum, LIST_LIMIT.maximum));
}
