import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson, tempDatabase } from './run-cli.js';

// Neither help nor a rejected argument may touch the database: these tests check that its file never appears.
describe.concurrent('apikeys --help', () => {
  const db = tempDatabase();
  afterAll(() => db.remove());

  it.each([
    {
      command: [],
      mentions: [
        ...['migrate', 'orgs', 'admin-keys', 'keys', 'audit', 'keys history', 'audit list'],
        ...['DATABASE_URL', 'APIKEYS_BASE_URL', 'APIKEYS_ADMIN_KEY'],
      ],
    },
    { command: ['migrate'], mentions: ['migrations'] },
    { command: ['orgs'], mentions: ['create', 'list'] },
    { command: ['orgs', 'create'], mentions: ['--name'] },
    { command: ['orgs', 'list'], mentions: ['organization'] },
    { command: ['admin-keys'], mentions: ['create', 'disable', 'enable'] },
    { command: ['admin-keys', 'create'], mentions: ['--name', '--org'] },
    { command: ['admin-keys', 'disable'], mentions: ['<admin_key_id>'] },
    { command: ['admin-keys', 'enable'], mentions: ['<admin_key_id>'] },
    {
      command: ['keys'],
      mentions: [
        ...['Database commands (operator; DATABASE_URL)', 'create', 'seed'],
        ...['API commands (admin;', 'list', 'get', 'history'],
      ],
    },
    { command: ['keys', 'create'], mentions: ['--name', '--org', '--workspace-id', '--created-by', 'archived'] },
    { command: ['keys', 'seed'], mentions: ['--count', '--org', '--workspaces', '--users', '--seed'] },
    {
      command: ['keys', 'list'],
      mentions: [
        ...['--status', '--workspace-id', '--created-by', '--limit', '--after', '--before', '--all', '--json'],
        ...['--after-id', '--before-id'],
      ],
    },
    { command: ['keys', 'get'], mentions: ['<api_key_id>', '--json', 'APIKEYS_BASE_URL', 'APIKEYS_ADMIN_KEY'] },
    { command: ['keys', 'update'], mentions: ['<api_key_id>', '--name', '--status', 'archived', '--admin-key'] },
    { command: ['keys', 'history'], mentions: ['<api_key_id>', 'oldest first', '--limit', '--json', '--admin-key'] },
    { command: ['audit'], mentions: ['list', 'audit trail'] },
    {
      command: ['audit', 'list'],
      mentions: [
        ...['--target-id', '--actor-id', '--type', '--occurred-after', '--occurred-before', '--limit'],
        ...['--after', '--before', '--after-id', '--before-id', '--all', '--json', 'JSON Lines', 'APIKEYS_ADMIN_KEY'],
      ],
    },
  ])('apikeys $command --help prints the usage on stdout and exits 0', async ({ command, mentions }) => {
    const result = await runCli([...command, '--help'], db.env);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.startsWith(`Usage: ${['apikeys', ...command].join(' ')} `)).toBe(true);
    for (const mention of mentions) {
      expect(result.stdout).toContain(mention);
    }
    expect(existsSync(db.path)).toBe(false);
  });
});

describe.concurrent('apikeys with a bad argument', () => {
  const db = tempDatabase();
  afterAll(() => db.remove());

  it.each([
    { case: 'an unknown command', args: ['rotate'], message: /unknown command 'rotate'/ },
    { case: 'a missing subcommand', args: ['keys'], message: /Usage: apikeys keys/ },
    {
      case: 'an unknown option',
      args: ['keys', 'create', '--name', 'k', '--bogus'],
      message: /unknown option '--bogus'/,
    },
    {
      case: 'an invalid --status',
      args: ['keys', 'create', '--name', 'k', '--status', 'revoked'],
      message: /'revoked' is invalid\. Allowed choices are active, inactive, archived/,
    },
    {
      case: 'an empty --name',
      args: ['orgs', 'create', '--name', ''],
      message: /--name.*1 to 500 characters \(got 0\)/,
    },
    { case: 'a non-integer --count', args: ['keys', 'seed', '--count', '1.5'], message: /--count.*whole number/ },
    {
      case: 'an unknown --type',
      args: ['audit', 'list', '--type', 'key.deleted'],
      message: /'key.deleted' is invalid/,
    },
    { case: 'keys history without an ID', args: ['keys', 'history'], message: /missing required argument/ },
  ])('$case exits 2 with a message on stderr and nothing on stdout', async ({ args, message }) => {
    const result = await runCli(args, db.env);

    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(message);
    expect(existsSync(db.path)).toBe(false);
  });
});

describe('apikeys with an argument only the database can reject', () => {
  const db = tempDatabase();
  afterAll(() => db.remove());

  it('--org naming no organization exits 2 and says so', async () => {
    const result = await runCli(['keys', 'create', '--name', 'k', '--org', 'org_missing'], db.env);

    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/organization org_missing does not exist/);
  });

  it('admin-keys disable of an unknown admin key exits 2 and says so', async () => {
    const result = await runCli(['admin-keys', 'disable', 'adminkey_missing'], db.env);

    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/admin key adminkey_missing does not exist/);
  });
});

describe('names are 1 to 500 characters counted in Unicode code points', () => {
  const db = tempDatabase();
  afterAll(() => db.remove());
  // U+1F511 is one code point but two UTF-16 code units: a count in code units would reject 251 of them.
  const key = '\u{1F511}';

  it.each([1, 500])(
    'keys create with a name of %i emoji code points creates the key with that name',
    async (length) => {
      const name = key.repeat(length);

      const created = await runCliJson<{ name: string }>(['keys', 'create', '--name', name], db.env);

      expect(created.name).toBe(name);
    },
  );

  it('keys create with a name of 501 emoji code points exits 2', async () => {
    const result = await runCli(['keys', 'create', '--name', key.repeat(501)], db.env);

    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/--name.*1 to 500 characters \(got 501\)/);
  });
});
