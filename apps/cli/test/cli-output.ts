import { userInfo } from 'node:os';
import { expect } from 'vitest';
import type { CliResult } from './run-cli.js';

/** How an error printed by an API command names the request the server answered. */
export const REQUEST_ID = /\(request req_[A-Za-z0-9]+\)/;

/** The value of one `field: value` line of the human output. */
export function field(stdout: string, name: string): string | undefined {
  const line = stdout.split('\n').find((each) => each.startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

/** Checks a run that the parser or the CLI refused before sending anything: exit 2, a message, nothing on stdout. */
export function expectUsageError(result: CliResult, message: RegExp | string): void {
  expect(result).toMatchObject({ code: 2, stdout: '' });
  expect(result.stderr).toMatch(message);
}

/** The OS user the CLI runs as (the one running the tests), which operator commands record; null when unknown. */
export function osUser(): string | null {
  try {
    return userInfo().username || null;
  } catch {
    return null;
  }
}
