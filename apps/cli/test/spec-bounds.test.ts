import { closedPort } from '@apikeys/server/testing';
import { loadSpec, specVersions } from '@apikeys/spec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson, tempDatabase } from './run-cli.js';

// The CLI checks arguments against the API's limits before it sends anything. Those limits are facts of the spec:
// these tests read them from the spec itself (not from the generated facts the CLI imports), so that a copy of one
// in the CLI that drifts from the spec fails here.

// The API commands speak the latest version unless told otherwise: read that version's document.
const SPEC = loadSpec(specVersions().at(-1));

/** Reads a path of the spec, failing with the path when a step is missing. */
function specAt(path: readonly string[]): unknown {
  let node: unknown = SPEC;
  for (const step of path) {
    if (typeof node !== 'object' || node === null || !(step in node)) {
      throw new Error(`the spec has no ${path.join('.')}`);
    }
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

/** An integer of the spec, failing with its path when it is not one. */
function specInteger(path: readonly string[]): number {
  const value = specAt(path);
  if (!Number.isSafeInteger(value)) {
    throw new Error(`the spec's ${path.join('.')} is not an integer: ${JSON.stringify(value)}`);
  }
  return value as number;
}

/** A non-empty list of strings of the spec, failing with its path when it is not one. */
function specStrings(path: readonly string[]): string[] {
  const value = specAt(path);
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string')) {
    throw new Error(`the spec's ${path.join('.')} is not a list of strings: ${JSON.stringify(value)}`);
  }
  return value;
}

const LIMIT = ['components', 'parameters', 'Limit', 'schema'];
const limit = {
  minimum: specInteger([...LIMIT, 'minimum']),
  maximum: specInteger([...LIMIT, 'maximum']),
  default: specInteger([...LIMIT, 'default']),
};
const NAME = ['components', 'schemas', 'UpdateApiKeyRequest', 'properties', 'name'];
const name = { minLength: specInteger([...NAME, 'minLength']), maxLength: specInteger([...NAME, 'maxLength']) };
const statuses = specStrings(['components', 'schemas', 'ApiKeyStatus', 'enum']);
const auditEventTypes = specStrings(['components', 'schemas', 'AuditEventType', 'enum']);
/** A value that is not a status: every status run together, then more. */
const NOT_A_STATUS = `${statuses.join('')}x`;

/** Commander's message for an option argument its parser rejected, then its pointer to the help. */
const rejected = (option: string, value: string, reason: string) =>
  `error: option '${option}' argument '${value}' is invalid. ${reason}\n(run with --help for usage)\n`;

/**
 * Runs the CLI against an API where nothing listens (registering the `beforeAll` that finds such a port): a command
 * that parsed its arguments then fails to reach it (exit 1), which `expectUnreachable` checks.
 */
function unreachableApi() {
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = `http://127.0.0.1:${await closedPort()}`;
    env = { APIKEYS_BASE_URL: baseUrl, APIKEYS_ADMIN_KEY: `sk-adm-${'x'.repeat(43)}` };
  });
  return {
    cli: (args: string[]) => runCli(args, env),
    expectUnreachable(result: { code: number; stdout: string; stderr: string }) {
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        new RegExp(`^apikeys: error: cannot reach the API at ${baseUrl}: connection refused\\n`),
      );
    },
  };
}

// `keys list` parses its arguments before it calls the API; an API that cannot be reached (exit 1) shows that the
// arguments were accepted, where a rejected argument exits 2.
describe.concurrent('apikeys keys list takes the bounds of the spec', () => {
  const { cli, expectUnreachable } = unreachableApi();

  it(`--limit of the spec's maximum passes argument parsing`, async () => {
    const result = await cli(['keys', 'list', `--limit=${limit.maximum}`]);

    expectUnreachable(result);
  });

  it.each([
    { case: 'one above the maximum', value: limit.maximum + 1 },
    { case: 'one below the minimum', value: limit.minimum - 1 },
  ])('--limit $case exits 2 naming both bounds', async ({ value }) => {
    const result = await cli(['keys', 'list', `--limit=${value}`]);

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: rejected('--limit <n>', String(value), `must be between ${limit.minimum} and ${limit.maximum}.`),
    });
  });

  it.each(statuses)('--status %s passes argument parsing', async (status) => {
    const result = await cli(['keys', 'list', '--status', status]);

    expectUnreachable(result);
  });

  it('--status of another value exits 2 naming exactly the statuses of the spec', async () => {
    const result = await cli(['keys', 'list', '--status', NOT_A_STATUS]);

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: rejected('--status <status>', NOT_A_STATUS, `Allowed choices are ${statuses.join(', ')}.`),
    });
  });

  it(`--help shows the spec's bounds and default of --limit and its statuses as the choices of --status`, async () => {
    const result = await cli(['keys', 'list', '--help']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    // Help is wrapped to the terminal's width: compare it with every run of whitespace made one space.
    const help = result.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      `--limit <n> keys per page, ${limit.minimum} to ${limit.maximum} (default: ${limit.default};`,
    );
    expect(help).toContain(
      `--status <status> only keys with this status (choices: ${statuses.map((status) => `"${status}"`).join(', ')})`,
    );
  });
});

// U+1F511 is one code point but two UTF-16 code units: the spec counts names in code points, as the CLI must.
describe.concurrent(`apikeys keys create takes the spec's length of a name`, () => {
  const db = tempDatabase();
  afterAll(() => db.remove());
  const key = '\u{1F511}';

  it(`--name of the spec's maxLength creates the key with that name`, async () => {
    const longest = key.repeat(name.maxLength);

    const created = await runCliJson<{ name: string }>(['keys', 'create', '--name', longest], db.env);

    expect(created.name).toBe(longest);
  });

  it(`--name one code point above the spec's maxLength exits 2 naming the bounds`, async () => {
    const tooLong = key.repeat(name.maxLength + 1);

    const result = await runCli(['keys', 'create', '--name', tooLong], db.env);

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: rejected(
        '--name <name>',
        tooLong,
        `must be ${name.minLength} to ${name.maxLength} characters (got ${name.maxLength + 1}).`,
      ),
    });
  });
});

// `audit list` checks its --type and --limit before it calls the API, as `keys list` does.
describe.concurrent('apikeys audit list takes the bounds of the spec', () => {
  const { cli, expectUnreachable } = unreachableApi();

  it('--type takes every type of the spec, repeated', async () => {
    const result = await cli(['audit', 'list', ...auditEventTypes.flatMap((type) => ['--type', type])]);

    expectUnreachable(result);
  });

  it('--type of another value exits 2 naming exactly the types of the spec', async () => {
    const notAType = `${auditEventTypes.join('')}x`;

    const result = await cli(['audit', 'list', '--type', notAType]);

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: rejected('--type <type>', notAType, `Allowed choices are ${auditEventTypes.join(', ')}.`),
    });
  });

  it.each([
    { case: 'one above the maximum', value: limit.maximum + 1 },
    { case: 'one below the minimum', value: limit.minimum - 1 },
  ])('--limit $case exits 2 naming both bounds', async ({ value }) => {
    const result = await cli(['audit', 'list', `--limit=${value}`]);

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: rejected('--limit <n>', String(value), `must be between ${limit.minimum} and ${limit.maximum}.`),
    });
  });

  it(`--help shows the spec's bounds and default of --limit and its types as the choices of --type`, async () => {
    const result = await cli(['audit', 'list', '--help']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const help = result.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      `--limit <n> events per page, ${limit.minimum} to ${limit.maximum} (default: ${limit.default};`,
    );
    expect(help).toContain(`(choices: ${auditEventTypes.map((type) => `"${type}"`).join(', ')})`);
  });
});
