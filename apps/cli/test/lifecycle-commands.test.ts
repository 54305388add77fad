import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import type { ApiKey, ApiKeyList, CreatedApiKey, RotatedApiKey } from '@apikeys/client';
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
import { SECRET_SHOWN_ONCE } from '../src/format/api-key.js';
import { expectUsageError, field, REQUEST_ID } from './cli-output.js';
import { FORMAT, runCli, runCliJson, tempDatabase } from './run-cli.js';

const DAY_MS = 86_400_000;

/** An RFC 3339 time `seconds` from now, in whole seconds, as a person would type it. */
function fromNow(seconds: number): string {
  return `${new Date(Math.floor(Date.now() / 1000) * 1000 + seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** The microsecond form the API answers with, of a time in whole seconds. */
function micros(rfc3339: string): string {
  return rfc3339.replace(/Z$/, '.000000Z');
}

// The key lifecycle commands of the admin CLI (keys issue, keys rotate, keys update's expiry) and the new fields of
// keys list and keys get, in the API version the API commands speak by default (2026-10-21), against the real server
// started as a child process. As in api-commands.test.ts, the API commands get a DATABASE_URL that must stay unused.
describe('apikeys lifecycle commands against the real server', () => {
  const db = tempDatabase();
  const untouched = join(db.dir, 'never-opened.sqlite');
  let server: StartedServerProcess;
  let adminKey: string;
  let adminKeyId: string;
  let env: NodeJS.ProcessEnv;

  const cli = (...args: string[]) => runCli(args, env);
  const cliJson = <T>(...args: string[]) => runCliJson<T>(args, env);
  /** The API's own answer in the latest version, for checking what the commands did. */
  const api = async (path: string) => {
    const response = await fetch(`${server.baseUrl}${API_KEYS_PATH}${path}`, {
      headers: { 'x-api-key': adminKey, 'vendor-version': LATEST_API_VERSION },
    });
    return response.json() as Promise<unknown>;
  };

  beforeAll(async () => {
    const { store } = await openMigratedStore(parseDatabaseUrl(db.env.DATABASE_URL));
    try {
      const created = await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'lifecycle tests' });
      adminKey = created.secret;
      adminKeyId = created.adminKey.id;
    } finally {
      await store.close();
    }
    server = await startServerProcess({ env: { DATABASE_URL: db.env.DATABASE_URL } });
    env = { APIKEYS_BASE_URL: server.baseUrl, APIKEYS_ADMIN_KEY: adminKey, DATABASE_URL: `file:${untouched}` };
  });

  afterAll(async () => {
    await server?.stop();
    expect(existsSync(untouched)).toBe(false);
    db.remove();
  });

  describe.concurrent('keys issue', () => {
    it('prints the new key and its secret once, on stdout only, and says it will not be shown again', async () => {
      const result = await cli('keys', 'issue', '--name', 'billing');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.trimEnd().split('\n');
      const secret = field(result.stdout, 'key') ?? '';
      expect(secret).toMatch(FORMAT.apiSecret);
      expect(result.stdout.split(secret)).toHaveLength(2);
      expect(lines.map((line) => line.split(':')[0])).toEqual([
        ...['id', 'name', 'status', 'scope', 'principal', 'expires_at', 'last_used_at', 'created_at', 'created_by'],
        ...['partial_key_hint', 'permissions', 'metadata', 'key', '', SECRET_SHOWN_ONCE.split(':')[0]],
      ]);
      expect(lines.at(-1)).toBe(SECRET_SHOWN_ONCE);
      expect(SECRET_SHOWN_ONCE).toMatch(/shown this once and cannot be shown again/);
      const id = field(result.stdout, 'id') ?? '';
      expect(id).toMatch(FORMAT.apiKeyId);
      expect(field(result.stdout, 'name')).toBe('billing');
      expect(field(result.stdout, 'status')).toBe('active');
      expect(field(result.stdout, 'scope')).toMatch(/^wrkspc_\S+ \(workspace\)$/);
      expect(field(result.stdout, 'principal')).toBe('(none)');
      expect(field(result.stdout, 'expires_at')).toBe('(never)');
      expect(field(result.stdout, 'last_used_at')).toBe('(never)');
      expect(field(result.stdout, 'created_by')).toBe(`${adminKeyId} (service_account)`);
      expect(field(result.stdout, 'partial_key_hint')).toBe(`${secret.slice(0, 11)}...${secret.slice(-4)}`);
      // Lines align their values, as keys get does.
      expect(lines[0]).toBe(`id:               ${id}`);
      expect(field(result.stdout, 'permissions')).toBe('(none)');
      expect(field(result.stdout, 'metadata')).toBe('(none)');
      expect(lines[12]).toBe(`key:              ${secret}`);

      const shown = await cli('keys', 'get', id, '--json');
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(shown.stdout).not.toContain(secret);
      expect(JSON.parse(shown.stdout)).not.toHaveProperty('key');
    });

    it('--json prints the API response with the secret in key, which later reads do not hold', async () => {
      const created = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'json', '--json');

      expect(created.key).toMatch(FORMAT.apiSecret);
      const { key: secret, ...stored } = created;
      expect(await api(`/${created.id}`)).toEqual(stored);
      expect(JSON.stringify(await api('?limit=1000'))).not.toContain(secret);
      expect(created).toMatchObject({ name: 'json', status: 'active', expires_at: null, principal: null });
    });

    it('--workspace-id --expires-in 30d issues a key of that workspace expiring in 30 days', async () => {
      const before = Date.now();

      const created = await cliJson<CreatedApiKey>(
        ...['keys', 'issue', '--name', 'monthly', '--workspace-id', 'wrkspc_cli', '--expires-in', '30d', '--json'],
      );

      const after = Date.now();
      expect(created.scope).toEqual({ type: 'workspace', workspace_id: 'wrkspc_cli' });
      const expiresAt = Date.parse(created.expires_at ?? '');
      expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + 30 * DAY_MS);
    });

    it.each([
      ['12h', 12 * 3_600_000],
      ['90m', 90 * 60_000],
      ['45s', 45_000],
    ])('--expires-in %s expires that long from now', async (duration, ms) => {
      const before = Date.now();

      const created = await cliJson<CreatedApiKey>(
        'keys',
        'issue',
        '--name',
        duration,
        '--expires-in',
        duration,
        '--json',
      );

      const expiresAt = Date.parse(created.expires_at ?? '');
      expect(expiresAt).toBeGreaterThanOrEqual(before + ms);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + ms);
    });

    it('--expires-at issues a key expiring at that time, shown in expires_at', async () => {
      const expiresAt = fromNow(7 * 86_400);

      const result = await cli('keys', 'issue', '--name', 'until', '--expires-at', expiresAt);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'expires_at')).toBe(micros(expiresAt));
    });

    it('--organization-scope --principal-user issues a key of the organization, bound to the user', async () => {
      const result = await cli('keys', 'issue', '--name', 'cli', '--organization-scope', '--principal-user', 'user_al');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'scope')).toBe('(organization)');
      expect(field(result.stdout, 'principal')).toBe('user_al (user_actor)');
      const id = field(result.stdout, 'id') ?? '';
      expect(await api(`/${id}`)).toMatchObject({
        scope: { type: 'organization' },
        principal: { type: 'user_actor', user_id: 'user_al' },
      });
    });

    it('--principal-service-account binds the key to the service account, in the default workspace', async () => {
      const created = await cliJson<CreatedApiKey>(
        ...['keys', 'issue', '--name', 'svc', '--principal-service-account', 'svcacct_1', '--json'],
      );

      expect(created.principal).toEqual({ type: 'service_account_actor', service_account_id: 'svcacct_1' });
      expect(created.scope.type).toBe('workspace');
    });
  });

  describe('keys rotate', () => {
    it('replaces a key at once: prints the new key and its secret, and the old key as expired', async () => {
      const old = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'to rotate', '--json');

      const result = await cli('keys', 'rotate', old.id);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const secret = field(result.stdout, 'key') ?? '';
      const id = field(result.stdout, 'id') ?? '';
      expect(secret).toMatch(FORMAT.apiSecret);
      expect(secret).not.toBe(old.key);
      expect(id).not.toBe(old.id);
      expect(field(result.stdout, 'name')).toBe('to rotate');
      expect(field(result.stdout, 'status')).toBe('active');
      expect(field(result.stdout, 'replaces')).toMatch(
        new RegExp(`^${old.id} is expired \\(expires_at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z\\)$`),
      );
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(SECRET_SHOWN_ONCE);
      expect(await api(`/${old.id}`)).toMatchObject({ status: 'expired' });
      expect(await api(`/${id}`)).toMatchObject({ status: 'active', name: 'to rotate' });
    });

    it.each([
      ['1h', 3_600_000],
      ['3600', 3_600_000],
      ['2d', 2 * DAY_MS],
    ])('--grace %s keeps the old key working that long (--json prints the API response)', async (grace, ms) => {
      const old = await cliJson<CreatedApiKey>('keys', 'issue', '--name', `grace ${grace}`, '--json');
      const before = Date.now();

      const rotated = await cliJson<RotatedApiKey>('keys', 'rotate', old.id, '--grace', grace, '--json');

      expect(rotated.key).toMatch(FORMAT.apiSecret);
      expect(rotated.rotated_api_key).toMatchObject({ id: old.id, status: 'active' });
      const expiresAt = Date.parse(rotated.rotated_api_key.expires_at ?? '');
      expect(expiresAt).toBeGreaterThanOrEqual(before - 1000 + ms);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + ms);
      const { key: _secret, rotated_api_key: _old, ...stored } = rotated;
      expect(await api(`/${rotated.id}`)).toEqual(stored);
    });

    it('says how long the old key keeps working', async () => {
      const old = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'gentle', '--json');

      const result = await cli('keys', 'rotate', old.id, '--grace', '1d');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'replaces')).toMatch(new RegExp(`^${old.id} stays active until \\d{4}-\\S+Z$`));
    });
  });

  describe('keys update with an expiry', () => {
    it('--expires-at sets the expiry and --no-expiry removes it', async () => {
      const key = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'to expire', '--json');
      const expiresAt = fromNow(3 * 86_400);

      const set = await cli('keys', 'update', key.id, '--expires-at', expiresAt);
      const removed = await cliJson<ApiKey>('keys', 'update', key.id, '--no-expiry', '--json');

      expect(set).toMatchObject({ code: 0, stderr: '' });
      expect(field(set.stdout, 'expires_at')).toBe(micros(expiresAt));
      expect(removed).toMatchObject({ id: key.id, expires_at: null, status: 'active' });
      expect(await api(`/${key.id}`)).toEqual(removed);
    });

    it('--expires-at with --name changes both', async () => {
      const key = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'both', '--json');
      const expiresAt = fromNow(86_400);

      const updated = await cliJson<ApiKey>(
        ...['keys', 'update', key.id, '--name', 'both, renamed', '--expires-at', expiresAt, '--json'],
      );

      expect(updated).toMatchObject({ name: 'both, renamed', expires_at: micros(expiresAt) });
    });
  });

  describe('keys list and keys get show the fields of 2026-10-21', () => {
    it('keys list prints SCOPE, PERMISSIONS and EXPIRES; --status expired lists exactly the expired keys', async () => {
      const expiring = await cliJson<CreatedApiKey>(
        ...['keys', 'issue', '--name', 'listed', '--organization-scope', '--principal-user', 'user_list'],
        ...['--expires-at', fromNow(86_400), '--json'],
      );
      const replaced = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'replaced', '--json');
      await cliJson<RotatedApiKey>('keys', 'rotate', replaced.id, '--json');

      const table = await cli('keys', 'list', '--limit', '1000');
      const expired = await cliJson<ApiKeyList>('keys', 'list', '--status', 'expired', '--limit', '1000', '--json');

      expect(table).toMatchObject({ code: 0, stderr: '' });
      const header = table.stdout.split('\n')[0] ?? '';
      expect(header).toMatch(
        new RegExp(
          '^ID {2,}NAME {2,}STATUS {2,}SCOPE {2,}PERMISSIONS {2,}EXPIRES \\(UTC\\) {2,}LAST USED \\(UTC\\) {2,}' +
            'CREATED \\(UTC\\)$',
        ),
      );
      const row = table.stdout.split('\n').find((line) => line.startsWith(expiring.id)) ?? '';
      expect(row.slice(header.indexOf('STATUS'))).toMatch(
        /^active +\(organization\) +\(none\) +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +never +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
      );
      const replacedRow = table.stdout.split('\n').find((line) => line.startsWith(replaced.id)) ?? '';
      expect(replacedRow.slice(header.indexOf('STATUS'))).toMatch(/^expired +wrkspc_\S+ +\(none\) +\d{4}-/);
      expect(expired).toEqual(await api('?status=expired&limit=1000'));
      expect(expired.data.map((key) => key.id)).toContain(replaced.id);
      expect(expired.data.every((key) => key.status === 'expired')).toBe(true);
    });

    it('keys get prints scope, principal, expires_at, permissions and metadata', async () => {
      const expiresAt = fromNow(86_400);
      const key = await cliJson<CreatedApiKey>(
        ...['keys', 'issue', '--name', 'shown', '--principal-service-account', 'svcacct_get'],
        ...['--expires-at', expiresAt, '--json'],
      );

      const result = await cli('keys', 'get', key.id);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const scope = key.scope.type === 'workspace' ? key.scope.workspace_id : '';
      expect(result.stdout).toBe(
        [
          `id:               ${key.id}`,
          'name:             shown',
          'status:           active',
          `scope:            ${scope} (workspace)`,
          'principal:        svcacct_get (service_account_actor)',
          `expires_at:       ${micros(expiresAt)}`,
          'last_used_at:     (never)',
          `created_at:       ${key.created_at}`,
          `created_by:       ${adminKeyId} (service_account)`,
          `partial_key_hint: ${key.partial_key_hint}`,
          'permissions:      (none)',
          'metadata:         (none)',
          '',
        ].join('\n'),
      );
    });

    it('with --api-version 2023-06-01, keys get shows an expired key as that version does: inactive', async () => {
      const replaced = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'seen by 2023', '--json');
      await cliJson<RotatedApiKey>('keys', 'rotate', replaced.id, '--json');

      const result = await cli('keys', 'get', replaced.id, '--api-version', API_VERSION);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(field(result.stdout, 'status')).toBe('inactive');
      expect(field(result.stdout, 'workspace_id')).toBe('(default)');
      expect(field(result.stdout, 'expires_at')).toBeUndefined();
    });

    it('with --api-version as a flag, the next-page command of keys list repeats it', async () => {
      await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'one', '--json');
      await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'two', '--json');

      const result = await cli('keys', 'list', '--limit', '1', '--api-version', API_VERSION);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(
        new RegExp(`^next page: apikeys keys list --api-version ${API_VERSION} --limit 1 --after apikey_\\w+$`),
      );
    });
  });

  describe.concurrent('failing', () => {
    it.each([
      {
        case: 'both expiry flags',
        args: ['issue', '--name', 'k', '--expires-at', '2030-01-01T00:00:00Z', '--expires-in', '30d'],
        message: /option '--expires-at <time>' cannot be used with option '--expires-in <duration>'/,
      },
      {
        case: 'update with --expires-at and --no-expiry',
        args: ['update', 'apikey_x', '--expires-at', '2030-01-01T00:00:00Z', '--no-expiry'],
        message: /option '--expires-at <time>' cannot be used with option '--no-expiry'/,
      },
      {
        case: 'a duration with an unknown unit',
        args: ['issue', '--name', 'k', '--expires-in', '30x'],
        message: /'--expires-in <duration>' argument '30x' is invalid\. must be a duration such as 90m, 12h or 30d/,
      },
      {
        case: '--expires-in without a unit',
        args: ['issue', '--name', 'k', '--expires-in', '30'],
        message: /'--expires-in <duration>' argument '30' is invalid\. must be a duration/,
      },
      {
        case: '--expires-in of zero',
        args: ['issue', '--name', 'k', '--expires-in', '0d'],
        message: /'--expires-in <duration>' argument '0d' is invalid\. must be more than zero/,
      },
      {
        case: 'a compound duration',
        args: ['issue', '--name', 'k', '--expires-in', '1d12h'],
        message: /argument '1d12h' is invalid/,
      },
      {
        case: 'a --grace that is not a duration',
        args: ['rotate', 'apikey_x', '--grace', 'soon'],
        message: /'--grace <duration>' argument 'soon' is invalid\. must be a duration .* or seconds/,
      },
      {
        case: 'a negative --grace',
        args: ['rotate', 'apikey_x', '--grace', '-5'],
        message: /'--grace <duration>' argument '-5' is invalid/,
      },
      {
        case: 'an --expires-at that is not a time',
        args: ['issue', '--name', 'k', '--expires-at', 'tomorrow'],
        message: /'--expires-at <time>' argument 'tomorrow' is invalid\. must be an RFC 3339 time with a time zone/,
      },
      {
        case: 'an --expires-at without a time zone',
        args: ['update', 'apikey_x', '--expires-at', '2030-01-01T00:00:00'],
        message: /argument '2030-01-01T00:00:00' is invalid\. must be an RFC 3339 time/,
      },
      {
        case: 'both principals',
        args: ['issue', '--name', 'k', '--principal-user', 'u', '--principal-service-account', 's'],
        message: /'--principal-user <user_id>' cannot be used with option '--principal-service-account <id>'/,
      },
      {
        case: 'a workspace and organization scope',
        args: ['issue', '--name', 'k', '--workspace-id', 'wrkspc_x', '--organization-scope'],
        message: /'--workspace-id <workspace_id>' cannot be used with option '--organization-scope'/,
      },
      { case: 'issue without --name', args: ['issue'], message: /required option '--name <name>' not specified/ },
      { case: 'rotate without an ID', args: ['rotate'], message: /missing required argument 'api_key_id'/ },
      {
        case: 'an unknown --api-version',
        args: ['list', '--api-version', '1999-01-01'],
        message: /'1999-01-01' is invalid\. Allowed choices are 2023-06-01, 2026-10-21/,
      },
      {
        case: 'update without fields',
        args: ['update', 'apikey_x'],
        message: /nothing to update: pass --name, --status, --expires-at, --no-expiry, --permission, /,
      },
    ])('$case exits 2 with a message on stderr', async ({ args, message }) => {
      expectUsageError(await cli('keys', ...args), message);
    });

    it('an --expires-at in the past exits 1 with the invalid_request_error of the API, naming expires_at', async () => {
      const result = await cli('keys', 'issue', '--name', 'k', '--expires-at', '2020-01-01T00:00:00Z');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: expires_at: /);
      expect(result.stderr).toMatch(REQUEST_ID);
    });

    it('--organization-scope without a principal exits 1 with the API error', async () => {
      const result = await cli('keys', 'issue', '--name', 'k', '--organization-scope');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*principal/);
    });

    it('a --grace over the maximum of the API exits 1 naming grace_period_seconds, and rotates nothing', async () => {
      const key = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'long grace', '--json');

      const result = await cli('keys', 'rotate', key.id, '--grace', '8d');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*grace_period_seconds/);
      expect(await api(`/${key.id}`)).toMatchObject({ status: 'active', expires_at: null });
    });

    it('rotating an expired key exits 1 with the invalid_request_error of the API', async () => {
      const key = await cliJson<CreatedApiKey>('keys', 'issue', '--name', 'rotated twice', '--json');
      await cliJson<RotatedApiKey>('keys', 'rotate', key.id, '--json');

      const result = await cli('keys', 'rotate', key.id);

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: /);
      expect(result.stderr).toMatch(REQUEST_ID);
    });

    it('rotating an unknown key exits 1 with not_found_error', async () => {
      const result = await cli('keys', 'rotate', 'apikey_missing');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: not_found_error: api_key_id: /);
    });
  });

  // With API version 2023-06-01, the lifecycle does not exist. The base URL is a closed port: a command that sent a
  // request would exit 1 (cannot reach the API), so exit 2 shows it was refused before anything was sent.
  describe.concurrent('with API version 2023-06-01', () => {
    let closed: NodeJS.ProcessEnv;
    beforeAll(async () => {
      closed = { ...env, APIKEYS_BASE_URL: `http://127.0.0.1:${await closedPort()}` };
    });

    it.each([
      {
        case: 'keys issue',
        args: ['issue', '--name', 'k', '--api-version', API_VERSION],
        message:
          `keys issue calls createApiKey, available from API version ${LATEST_API_VERSION}; ` +
          `--api-version (or APIKEYS_API_VERSION) is ${API_VERSION}`,
      },
      {
        case: 'keys rotate',
        args: ['rotate', 'apikey_x', '--api-version', API_VERSION],
        message: `keys rotate calls rotateApiKey, available from API version ${LATEST_API_VERSION}`,
      },
      {
        case: 'keys update --expires-at',
        args: ['update', 'apikey_x', '--expires-at', '2030-01-01T00:00:00Z', '--api-version', API_VERSION],
        message: `--expires-at needs API version ${LATEST_API_VERSION} or later, which has expiry`,
      },
      {
        case: 'keys update --no-expiry',
        args: ['update', 'apikey_x', '--no-expiry', '--api-version', API_VERSION],
        message: `--no-expiry needs API version ${LATEST_API_VERSION} or later`,
      },
      {
        case: 'keys list --status expired',
        args: ['list', '--status', 'expired', '--api-version', API_VERSION],
        message: `API version ${API_VERSION} has no status expired (its statuses: active, inactive, archived)`,
      },
    ])('$case exits 2 naming the version it needs, and sends nothing', async ({ args, message }) => {
      const result = await runCli(['keys', ...args], closed);

      expectUsageError(result, /^apikeys: error: /);
      expect(result.stderr).toContain(message);
    });

    it('APIKEYS_API_VERSION=2023-06-01 refuses keys issue the same way', async () => {
      const result = await runCli(['keys', 'issue', '--name', 'k'], { ...closed, APIKEYS_API_VERSION: API_VERSION });

      expectUsageError(result, /keys issue calls createApiKey, available from API version/);
    });
  });

  describe.concurrent('--help', () => {
    it.each([
      {
        command: ['keys'],
        mentions: ['API commands (admin;', 'issue', 'rotate', 'not the database, as create does'],
      },
      {
        command: ['keys', 'issue'],
        mentions: [
          ...['--name', '--workspace-id', '--organization-scope', '--principal-user', '--principal-service-account'],
          ...['--expires-at', '--expires-in', '--json', '--api-version', 'APIKEYS_ADMIN_KEY'],
          ...['admin API', 'keys create', 'database', 'printed this once'],
        ],
      },
      { command: ['keys', 'rotate'], mentions: ['<api_key_id>', '--grace', '--json', 'grace period', 'this once'] },
      { command: ['keys', 'update'], mentions: ['--expires-at', '--no-expiry', '--name', '--status'] },
    ])('apikeys $command --help documents the lifecycle', async ({ command, mentions }) => {
      const result = await runCli([...command, '--help'], env);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const help = result.stdout.replace(/\s+/g, ' ');
      for (const mention of mentions) {
        expect(help).toContain(mention);
      }
    });
  });
});
