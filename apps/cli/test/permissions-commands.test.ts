import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import type { ApiKey, ApiKeyList, CreatedApiKey } from '@apikeys/client';
import {
  API_KEYS_PATH,
  API_VERSION,
  closedPort,
  DEFAULT_ORGANIZATION,
  type StartedServerProcess,
  startServerProcess,
} from '@apikeys/server/testing';
import { openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectUsageError, field, REQUEST_ID } from './cli-output.js';
import { runCli, runCliJson, tempDatabase } from './run-cli.js';

const METADATA = { owner: 'team-billing', plan: 'enterprise', limits: { rps: 10 }, tags: ['eu', 'prod'] };

// Keys' permissions and metadata (2026-10-21) through keys issue, get, update, list and history, against the real
// server started as a child process. As in api-commands.test.ts, the API commands get a DATABASE_URL that must stay
// unused.
describe('apikeys permissions and metadata against the real server', () => {
  const db = tempDatabase();
  const untouched = join(db.dir, 'never-opened.sqlite');
  let server: StartedServerProcess;
  let adminKey: string;
  let env: NodeJS.ProcessEnv;
  /** Env whose base URL is a closed port: a command that sent a request would exit 1, not 2. */
  let closed: NodeJS.ProcessEnv;

  const cli = (...args: string[]) => runCli(args, env);
  const cliJson = <T>(...args: string[]) => runCliJson<T>(args, env);
  /** The API's own answer in the latest version, for checking what the commands did. */
  const api = async (path: string) => {
    const response = await fetch(`${server.baseUrl}${API_KEYS_PATH}${path}`, {
      headers: { 'x-api-key': adminKey, 'vendor-version': LATEST_API_VERSION },
    });
    return response.json() as Promise<unknown>;
  };
  const issue = (name: string, ...args: string[]) =>
    cliJson<CreatedApiKey>('keys', 'issue', '--name', name, ...args, '--json');

  beforeAll(async () => {
    const { store } = await openMigratedStore(parseDatabaseUrl(db.env.DATABASE_URL));
    try {
      adminKey = (await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'permission tests' }))
        .secret;
    } finally {
      await store.close();
    }
    server = await startServerProcess({ env: { DATABASE_URL: db.env.DATABASE_URL } });
    env = { APIKEYS_BASE_URL: server.baseUrl, APIKEYS_ADMIN_KEY: adminKey, DATABASE_URL: `file:${untouched}` };
    closed = { ...env, APIKEYS_BASE_URL: `http://127.0.0.1:${await closedPort()}` };
  });

  afterAll(async () => {
    await server?.stop();
    expect(existsSync(untouched)).toBe(false);
    db.remove();
  });

  describe.concurrent('keys issue and keys get', () => {
    it('issue --permission (repeated) --metadata prints both, and keys get shows them the same way', async () => {
      const result = await cli(
        ...['keys', 'issue', '--name', 'with permissions', '--permission', 'documents.read'],
        ...['--permission', 'documents.*', '--metadata', JSON.stringify(METADATA)],
      );

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'permissions')).toBe('documents.read, documents.*');
      expect(field(result.stdout, 'metadata')).toBe(JSON.stringify(METADATA));
      const id = field(result.stdout, 'id') ?? '';
      expect(await api(`/${id}`)).toMatchObject({ permissions: ['documents.read', 'documents.*'], metadata: METADATA });

      const shown = await cli('keys', 'get', id);

      expect(shown).toMatchObject({ code: 0, stderr: '' });
      const lines = shown.stdout.trimEnd().split('\n');
      expect(lines.slice(-3)).toEqual([
        expect.stringMatching(/^partial_key_hint: sk-api-/),
        'permissions:      documents.read, documents.*',
        `metadata:         ${JSON.stringify(METADATA)}`,
      ]);
    });

    it('issue without them prints (none) for both; --json carries [] and {}', async () => {
      const result = await cli('keys', 'issue', '--name', 'bare');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'permissions')).toBe('(none)');
      expect(field(result.stdout, 'metadata')).toBe('(none)');
      const id = field(result.stdout, 'id') ?? '';
      const output = await cliJson<ApiKey>('keys', 'get', id, '--json');
      expect(output).toMatchObject({ permissions: [], metadata: {} });
      expect(output).toEqual(await api(`/${id}`));
    });

    it('issue --json prints permissions and metadata as the API returns them', async () => {
      const created = await issue('json', '--permission', '*', '--metadata', '{"env": "staging"}');

      expect(created).toMatchObject({ permissions: ['*'], metadata: { env: 'staging' } });
      const { key: _secret, ...stored } = created;
      expect(await api(`/${created.id}`)).toEqual(stored);
    });

    it('issue --metadata-file reads the object from a file', async () => {
      const path = join(db.dir, 'metadata.json');
      writeFileSync(path, `${JSON.stringify(METADATA, null, 2)}\n`);

      const created = await issue('from a file', '--metadata-file', path);

      expect(created.metadata).toEqual(METADATA);
    });

    it('issue --metadata-file - reads the object from standard input', async () => {
      const result = await runCli(
        ['keys', 'issue', '--name', 'from stdin', '--metadata-file', '-', '--json'],
        env,
        '{"owner": "stdin"}',
      );

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect((JSON.parse(result.stdout) as CreatedApiKey).metadata).toEqual({ owner: 'stdin' });
    });
  });

  describe('keys update', () => {
    it('--permission replaces the whole list, --no-permissions clears it, and the metadata stays', async () => {
      const key = await issue('replaced', '--permission', 'a.read', '--permission', 'a.write', '--metadata', '{"x":1}');

      const replaced = await cli('keys', 'update', key.id, '--permission', 'b.read');

      expect(replaced).toMatchObject({ code: 0, stderr: '' });
      expect(field(replaced.stdout, 'permissions')).toBe('b.read');
      expect(field(replaced.stdout, 'metadata')).toBe('{"x":1}');
      expect(await api(`/${key.id}`)).toMatchObject({ permissions: ['b.read'], metadata: { x: 1 } });

      const cleared = await cliJson<ApiKey>('keys', 'update', key.id, '--no-permissions', '--json');

      expect(cleared).toMatchObject({ permissions: [], metadata: { x: 1 } });
      expect(await api(`/${key.id}`)).toEqual(cleared);
    });

    it("--metadata replaces the whole object (no merge), --metadata '{}' clears it; the permissions stay", async () => {
      const key = await issue('metadata', '--permission', 'a.read', '--metadata', '{"x":1,"y":2}');

      const replaced = await cliJson<ApiKey>('keys', 'update', key.id, '--metadata', '{"z":3}', '--json');

      expect(replaced).toMatchObject({ permissions: ['a.read'], metadata: { z: 3 } });

      const cleared = await cli('keys', 'update', key.id, '--metadata', '{}');

      expect(cleared).toMatchObject({ code: 0, stderr: '' });
      expect(field(cleared.stdout, 'metadata')).toBe('(none)');
      expect(field(cleared.stdout, 'permissions')).toBe('a.read');
      expect(await api(`/${key.id}`)).toMatchObject({ permissions: ['a.read'], metadata: {} });
    });

    it('--name alone leaves permissions and metadata as they were', async () => {
      const key = await issue('untouched', '--permission', 'a.read', '--metadata', '{"x":1}');

      const renamed = await cliJson<ApiKey>('keys', 'update', key.id, '--name', 'renamed', '--json');

      expect(renamed).toMatchObject({ name: 'renamed', permissions: ['a.read'], metadata: { x: 1 } });
    });
  });

  describe('keys list --permission', () => {
    it('lists exactly the keys whose permissions grant it, wildcards included, with a PERMISSIONS column', async () => {
      const tag = `list${Date.now()}`;
      const exact = await issue(`${tag} exact`, '--permission', `${tag}.read`);
      const wildcard = await issue(`${tag} wildcard`, '--permission', `${tag}.*`);
      const everything = await issue(`${tag} everything`, '--permission', '*');
      const other = await issue(`${tag} other`, '--permission', `${tag}.write`, '--permission', `${tag}x.read`);
      const none = await issue(`${tag} none`);

      const listed = await cliJson<ApiKeyList>(
        'keys',
        'list',
        '--permission',
        `${tag}.read`,
        '--limit',
        '1000',
        '--json',
      );

      const ids = listed.data.map((key) => key.id);
      expect(ids).toEqual(expect.arrayContaining([exact.id, wildcard.id, everything.id]));
      expect(ids).not.toContain(other.id);
      expect(ids).not.toContain(none.id);
      expect(listed.data.every((key) => key.permissions.length > 0)).toBe(true);
      expect(listed).toEqual(await api(`?permission=${tag}.read&limit=1000`));

      const table = await cli('keys', 'list', '--permission', `${tag}.read`, '--limit', '1000');

      expect(table).toMatchObject({ code: 0, stderr: '' });
      const [header = '', ...rows] = table.stdout.trimEnd().split('\n');
      expect(header).toMatch(
        new RegExp(
          '^ID {2,}NAME {2,}STATUS {2,}SCOPE {2,}PERMISSIONS {2,}EXPIRES \\(UTC\\) {2,}LAST USED \\(UTC\\) {2,}' +
            'CREATED \\(UTC\\)$',
        ),
      );
      const permissionsCell = (id: string) => {
        const row = rows.find((line) => line.startsWith(id)) ?? '';
        return row.slice(header.indexOf('PERMISSIONS'), header.indexOf('EXPIRES')).trimEnd();
      };
      expect(permissionsCell(wildcard.id)).toBe(`${tag}.*`);
      expect(permissionsCell(everything.id)).toBe('*');
    });

    it('takes a wildcard: lists the keys holding it or a wider one, as the API does for documents.%2A', async () => {
      const tag = `wild${Date.now()}`;
      const wildcard = await issue(`${tag} wildcard`, '--permission', `${tag}.*`);
      const everything = await issue(`${tag} everything`, '--permission', '*');
      const exact = await issue(`${tag} exact`, '--permission', `${tag}.read`);

      const listed = await cliJson<ApiKeyList>('keys', 'list', '--permission', `${tag}.*`, '--limit', '1000', '--json');

      const ids = listed.data.map((key) => key.id);
      expect(ids).toEqual(expect.arrayContaining([wildcard.id, everything.id]));
      expect(ids).not.toContain(exact.id);
      expect(listed).toEqual(await api(`?permission=${tag}.%2A&limit=1000`));
    });

    it('cuts a long list in the table, which keys get shows whole', async () => {
      const names = ['documents.read', 'documents.write', 'invoices.read', 'invoices.write'];
      const key = await issue('long list', ...names.flatMap((name) => ['--permission', name]));

      const table = await cli('keys', 'list', '--limit', '1000');

      const [header = '', ...rows] = table.stdout.trimEnd().split('\n');
      const row = rows.find((line) => line.startsWith(key.id)) ?? '';
      const cell = row.slice(header.indexOf('PERMISSIONS'), header.indexOf('EXPIRES')).trimEnd();
      expect(cell).toBe(`${names.join(', ').slice(0, 31)}…`);
      expect(field((await cli('keys', 'get', key.id)).stdout, 'permissions')).toBe(names.join(', '));
    });

    it('the next-page command keeps the filter', async () => {
      await issue('paged one', '--permission', 'paged.read');
      await issue('paged two', '--permission', 'paged.read');

      const result = await cli('keys', 'list', '--permission', 'paged.read', '--limit', '1');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(
        /^next page: apikeys keys list --permission paged\.read --limit 1 --after apikey_\w+$/,
      );
    });
  });

  describe('keys history', () => {
    it('shows the permissions and metadata of the creation and of each change, from → to', async () => {
      const key = await issue('audited', '--permission', 'a.read', '--metadata', '{"x":1}');
      await cliJson<ApiKey>('keys', 'update', key.id, '--permission', 'a.read', '--permission', 'a.write', '--json');
      await cliJson<ApiKey>('keys', 'update', key.id, '--no-permissions', '--metadata', '{}', '--json');

      const result = await cli('keys', 'history', key.id);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const [header = '', ...rows] = result.stdout.trimEnd().split('\n');
      const changes = rows.map((row) => row.slice(header.indexOf('CHANGES')));
      expect(changes).toHaveLength(3);
      expect(changes[0]).toContain('permissions: null → ["a.read"]; metadata: null → {"x":1}');
      expect(changes[1]).toBe('permissions: ["a.read"] → ["a.read","a.write"]');
      expect(changes[2]).toBe('permissions: ["a.read","a.write"] → []; metadata: {"x":1} → {}');
    });
  });

  describe.concurrent('failing', () => {
    const arrayFile = join(db.dir, 'array.json');
    writeFileSync(arrayFile, '[{"owner": "x"}]');

    it.each([
      {
        case: 'both --metadata and --metadata-file',
        args: ['issue', '--name', 'k', '--metadata', '{}', '--metadata-file', 'package.json'],
        message: /option '--metadata <json>' cannot be used with option '--metadata-file <path>'/,
      },
      {
        case: 'both metadata options on update',
        args: ['update', 'apikey_x', '--metadata-file', 'package.json', '--metadata', '{}'],
        message: /option '--metadata <json>' cannot be used with option '--metadata-file <path>'/,
      },
      {
        case: '--metadata that is not JSON',
        args: ['issue', '--name', 'k', '--metadata', '{owner: x}'],
        message: /option '--metadata <json>' argument '\{owner: x\}' is invalid\. must be a JSON object: /,
      },
      {
        case: '--metadata that is an array',
        args: ['issue', '--name', 'k', '--metadata', '["a"]'],
        message: /option '--metadata <json>' argument .* is invalid\. must be a JSON object .*, not an array\./,
      },
      {
        case: '--metadata that is a string',
        args: ['update', 'apikey_x', '--metadata', '"owner"'],
        message: /option '--metadata <json>' argument .* is invalid\. must be a JSON object .*, not a string\./,
      },
      {
        case: '--metadata null',
        args: ['update', 'apikey_x', '--metadata', 'null'],
        message: /option '--metadata <json>' argument 'null' is invalid\. must be a JSON object .*, not null\./,
      },
      {
        case: 'a --metadata-file that does not exist',
        args: ['issue', '--name', 'k', '--metadata-file', 'no-such-file.json'],
        message: /option '--metadata-file <path>' argument 'no-such-file.json' is invalid\. cannot read it \(ENOENT\)/,
      },
      {
        case: 'a --metadata-file that holds an array',
        args: ['issue', '--name', 'k', '--metadata-file', arrayFile],
        message:
          /'--metadata-file <path>' argument '.*array\.json' is invalid\. must be a JSON object .*, not an array/,
      },
      {
        case: '--metadata with 1e400, which JSON.parse reads as Infinity (sent as null)',
        args: ['issue', '--name', 'k', '--metadata', '{"limits": {"rps": 1e400}}'],
        message:
          /'--metadata <json>' argument .* is invalid\. metadata\.limits\.rps: a number must be finite and within /,
      },
      {
        case: '--metadata with 2^53 + 1, which JSON.parse reads as 2^53',
        args: ['update', 'apikey_x', '--metadata', '{"customer_id": 9007199254740993}'],
        message:
          /is invalid\. metadata\.customer_id: .*±9007199254740991 \(2\^53 − 1\); send larger ones as strings\.$/m,
      },
      {
        case: 'two permissions in one --permission',
        args: ['issue', '--name', 'k', '--permission', 'a.read,a.write'],
        message: /'--permission <name>' argument 'a.read,a.write' is invalid\. must be one permission name: repeat/,
      },
      {
        case: 'a permission name in capitals',
        args: ['update', 'apikey_x', '--permission', 'Documents.read'],
        message: /'--permission <name>' argument 'Documents.read' is invalid\. must be a permission name/,
      },
      {
        case: 'keys list --permission with a bad name',
        args: ['list', '--permission', 'documents.'],
        message: /'--permission <name>' argument 'documents.' is invalid\. must be a permission name/,
      },
      {
        case: '--permission with --no-permissions',
        args: ['update', 'apikey_x', '--permission', 'a.read', '--no-permissions'],
        message: /option '--permission <name>' cannot be used with option '--no-permissions'/,
      },
      {
        case: 'update without fields',
        args: ['update', 'apikey_x'],
        message:
          'nothing to update: pass --name, --status, --expires-at, --no-expiry, --permission, --no-permissions, ' +
          '--metadata or --metadata-file',
      },
    ])('$case exits 2 with a message on stderr, sending nothing', async ({ args, message }) => {
      expectUsageError(await runCli(['keys', ...args], closed), message);
    });

    it('a --metadata-file - that is not JSON exits 2 naming the option', async () => {
      const result = await runCli(['keys', 'issue', '--name', 'k', '--metadata-file', '-'], closed, 'owner=x');

      expectUsageError(result, /option '--metadata-file <path>' argument '-' is invalid\. must be a JSON object: /);
    });

    it.each([
      {
        case: 'keys update --permission',
        args: ['update', 'apikey_x', '--permission', 'a.read'],
        flag: '--permission',
      },
      {
        case: 'keys update --no-permissions',
        args: ['update', 'apikey_x', '--no-permissions'],
        flag: '--no-permissions',
      },
      { case: 'keys update --metadata', args: ['update', 'apikey_x', '--metadata', '{}'], flag: '--metadata' },
      { case: 'keys list --permission', args: ['list', '--permission', 'a.read'], flag: '--permission' },
    ])('$case with API version 2023-06-01 exits 2 naming the version it needs', async ({ args, flag }) => {
      const result = await runCli(['keys', ...args, '--api-version', API_VERSION], closed);

      expectUsageError(result, /^apikeys: error: /);
      expect(result.stderr).toContain(
        `${flag} needs API version ${LATEST_API_VERSION} or later, whose keys have permissions and metadata; ` +
          `--api-version (or APIKEYS_API_VERSION) is ${API_VERSION}`,
      );
    });

    it('more permissions than the API takes exit 1 with its invalid_request_error naming permissions', async () => {
      const many = Array.from({ length: 101 }, (_, index) => ['--permission', `p${index}.read`]).flat();

      const result = await cli('keys', 'issue', '--name', 'too many', ...many);

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*permissions/);
      expect(result.stderr).toMatch(REQUEST_ID);
    });

    it('a repeated permission exits 1 with the API error, and the key keeps its permissions', async () => {
      const key = await issue('repeated', '--permission', 'a.read');

      const result = await cli('keys', 'update', key.id, '--permission', 'b.read', '--permission', 'b.read');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*permissions/);
      expect(await api(`/${key.id}`)).toMatchObject({ permissions: ['a.read'] });
    });

    it('metadata over 4 KiB exits 1 with the invalid_request_error of the API naming metadata', async () => {
      const result = await cli('keys', 'issue', '--name', 'big', '--metadata', JSON.stringify({ x: 'y'.repeat(4100) }));

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*metadata/);
    });

    it('metadata nested deeper than the API takes exits 1 naming metadata', async () => {
      const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };

      const result = await cli('keys', 'issue', '--name', 'deep', '--metadata', JSON.stringify(deep));

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*metadata/);
    });
  });

  describe.concurrent('--help', () => {
    it.each([
      { command: ['keys', 'issue'], mentions: ['--permission <name>', '--metadata <json>', '--metadata-file <path>'] },
      {
        command: ['keys', 'update'],
        mentions: ['--permission <name>', '--no-permissions', '--metadata <json>', "--metadata '{}' removes it"],
      },
      { command: ['keys', 'list'], mentions: ['--permission <name>', 'wildcards included'] },
    ])('apikeys $command --help documents permissions and metadata', async ({ command, mentions }) => {
      const result = await runCli([...command, '--help'], env);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const help = result.stdout.replace(/\s+/g, ' ');
      for (const mention of mentions) {
        expect(help).toContain(mention);
      }
    });
  });
});
