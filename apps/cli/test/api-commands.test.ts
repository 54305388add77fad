import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiKey, ApiKeyList } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  API_VERSION,
  closedPort,
  createTestKey,
  DEFAULT_ORGANIZATION,
  type StartedServerProcess,
  snapshotKeys,
  startServerProcess,
} from '@apikeys/server/testing';
import { openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import { seedApiKeys } from '@apikeys/store/seeding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedApiKeyJson } from '../src/format/stored-records.js';
import { REQUEST_ID } from './cli-output.js';
import { runCli, runCliJson, tempDatabase } from './run-cli.js';

const LONG_NAME = 'Payments reconciliation worker for the EU billing cluster (legacy)';

// One server for the whole file, over a database the store fills before it starts: 300 seeded keys plus two named
// ones. The API commands must never open the database themselves, so they get a DATABASE_URL that must stay unused.
describe('apikeys API commands against the real server', () => {
  const db = tempDatabase();
  const untouched = join(db.dir, 'never-opened.sqlite');
  let server: StartedServerProcess;
  let adminKey: string;
  /** Every key of the organization, newest first, as the store saw it before the server started. */
  let all: ApiKey[];
  let longNamed: ApiKey;
  let target: ApiKey;
  let env: NodeJS.ProcessEnv;

  const cli = (...args: string[]) => runCli(args, env);
  const cliJson = <T>(...args: string[]) => runCliJson<T>(args, env);
  /** The API's own answer, for checking that `--json` prints it as it is. */
  const api = async (path: string) => {
    const response = await fetch(`${server.baseUrl}${API_KEYS_PATH}${path}`, {
      headers: { 'x-api-key': adminKey, 'vendor-version': API_VERSION },
    });
    return response.json() as Promise<unknown>;
  };
  const rows = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('apikey_'));

  beforeAll(async () => {
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { store } = await openMigratedStore(parseDatabaseUrl(db.env.DATABASE_URL));
    try {
      adminKey = (await store.createAdminKey({ organizationId, name: 'cli tests' })).secret;
      await seedApiKeys(store, { organizationId, count: 300, workspaces: 3, users: 4, seed: 11 });
      const createdBy = { id: 'user_ops', type: 'user' } as const;
      const created = await createTestKey(store, organizationId, {
        name: 'to update',
        workspaceId: 'wrkspc_cli',
        createdBy,
      });
      target = storedApiKeyJson(created.apiKey);
      longNamed = storedApiKeyJson((await createTestKey(store, organizationId, { name: LONG_NAME, createdBy })).apiKey);
      all = (await snapshotKeys(store, organizationId)).map((key) => storedApiKeyJson(key));
    } finally {
      await store.close();
    }
    server = await startServerProcess({ env: { DATABASE_URL: db.env.DATABASE_URL } });
    // These commands speak the latest version unless told otherwise; this file checks their output in the first
    // version, which scripts written before the latest existed can keep with APIKEYS_API_VERSION. The latest
    // version's output is checked in lifecycle-commands.test.ts.
    env = {
      APIKEYS_BASE_URL: server.baseUrl,
      APIKEYS_ADMIN_KEY: adminKey,
      APIKEYS_API_VERSION: API_VERSION,
      DATABASE_URL: `file:${untouched}`,
    };
  });

  afterAll(async () => {
    await server?.stop();
    expect(existsSync(untouched)).toBe(false);
    db.remove();
  });

  describe.concurrent('reading', () => {
    it('keys list prints the newest 20 keys as a table, then the command for the next page', async () => {
      const result = await cli('keys', 'list');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.trimEnd().split('\n');
      const header = lines[0] ?? '';
      expect(header).toMatch(/^ID {2,}NAME {2,}STATUS {2,}WORKSPACE {2,}CREATED \(UTC\)$/);
      expect(rows(result.stdout).map((row) => row.slice(0, 31))).toEqual(all.slice(0, 20).map((key) => key.id));
      expect(lines.at(-1)).toBe(`next page: apikeys keys list --after ${all[19]?.id}`);
      // Every row has its status and workspace under the headers, so the long name was cut to fit its column.
      const longRow = rows(result.stdout).find((row) => row.startsWith(longNamed.id)) ?? '';
      expect(longRow.slice(header.indexOf('NAME'), header.indexOf('STATUS')).trimEnd()).toBe(
        `${LONG_NAME.slice(0, 39)}…`,
      );
      for (const row of rows(result.stdout)) {
        const key = all.find((candidate) => row.startsWith(candidate.id));
        expect(row.slice(header.indexOf('STATUS'))).toMatch(
          new RegExp(
            `^${key?.status} +${key?.workspace_id ?? '\\(default\\)'} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`,
          ),
        );
      }
    });

    it('keys list --status --limit ends with a next-page command that keeps the filter and the limit', async () => {
      const result = await cli('keys', 'list', '--status', 'active', '--limit', '2');

      const active = all.filter((key) => key.status === 'active');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(rows(result.stdout)).toHaveLength(2);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
        `next page: apikeys keys list --status active --limit 2 --after ${active[1]?.id}`,
      );
    });

    it('keys list --json --limit 5 prints the API response as it is', async () => {
      const output = await cliJson<ApiKeyList>('keys', 'list', '--json', '--limit', '5');

      expect(output).toEqual(await api('?limit=5'));
      expect(output).toMatchObject({ has_more: true, first_id: all[0]?.id, last_id: all[4]?.id });
    });

    it('keys list --after the last key of a page prints the next page', async () => {
      const output = await cliJson<ApiKeyList>('keys', 'list', '--json', '--limit', '5', '--after', all[4]?.id ?? '');

      expect(output.data.map((key) => key.id)).toEqual(all.slice(5, 10).map((key) => key.id));
      expect(output).toEqual(await api(`?limit=5&after_id=${all[4]?.id}`));
    });

    it('keys list --before the first key of the second page prints the first page', async () => {
      const output = await cliJson<ApiKeyList>('keys', 'list', '--json', '--limit', '5', '--before', all[5]?.id ?? '');

      expect(output.data.map((key) => key.id)).toEqual(all.slice(0, 5).map((key) => key.id));
      expect(output.has_more).toBe(false);
    });

    it.each([
      ['--after-id', 5, 10],
      ['--before-id', 0, 5],
    ] as const)('keys list %s, the earlier spelling of the cursor, prints the same page', async (flag, from, to) => {
      const cursor = (flag === '--after-id' ? all[4]?.id : all[5]?.id) ?? '';
      const output = await cliJson<ApiKeyList>('keys', 'list', '--json', '--limit', '5', flag, cursor);

      expect(output.data.map((key) => key.id)).toEqual(all.slice(from, to).map((key) => key.id));
    });

    it('keys list --status --workspace-id --created-by prints exactly the keys matching every filter', async () => {
      const output = await cliJson<ApiKeyList>(
        ...['keys', 'list', '--json', '--limit', '1000', '--status', 'inactive'],
        ...['--workspace-id', 'wrkspc_seed1', '--created-by', 'user_seed2'],
      );

      const expected = all.filter(
        (key) => key.status === 'inactive' && key.workspace_id === 'wrkspc_seed1' && key.created_by.id === 'user_seed2',
      );
      expect(expected.length).toBeGreaterThan(0);
      expect(output).toEqual({
        data: expected,
        has_more: false,
        first_id: expected[0]?.id,
        last_id: expected.at(-1)?.id,
      });
    });

    it('keys list --all --limit 50 --json walks every page and prints every key exactly once, newest first', async () => {
      const result = await cli('keys', 'list', '--all', '--limit', '50', '--json');

      // stderr is a pipe here, not a terminal: no progress line.
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const output = JSON.parse(result.stdout) as { data: ApiKey[] };
      expect(Object.keys(output)).toEqual(['data']);
      expect(output.data).toHaveLength(302);
      expect(new Set(output.data.map((key) => key.id)).size).toBe(302);
      expect(output.data.map((key) => key.id)).toEqual(all.map((key) => key.id));
      expect(result.stdout).toBe(`${JSON.stringify(output, null, 2)}\n`);
    });

    it('keys list --all --status archived prints one table of every archived key and no next-page command', async () => {
      const result = await cli('keys', 'list', '--all', '--status', 'archived');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const archived = all.filter((key) => key.status === 'archived').map((key) => key.id);
      expect(archived.length).toBeGreaterThan(20);
      expect(rows(result.stdout).map((row) => row.slice(0, 31))).toEqual(archived);
      expect(result.stdout).not.toContain('next page');
    });

    it('keys get prints the key as field: value lines, with its whole name and (default) for no workspace', async () => {
      const result = await cli('keys', 'get', longNamed.id);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toBe(
        [
          `id:               ${longNamed.id}`,
          `name:             ${LONG_NAME}`,
          'status:           active',
          'workspace_id:     (default)',
          `created_at:       ${longNamed.created_at}`,
          'created_by:       user_ops (user)',
          `partial_key_hint: ${longNamed.partial_key_hint}`,
          '',
        ].join('\n'),
      );
    });

    it('keys get --json prints the API response as it is', async () => {
      const output = await cliJson<ApiKey>('keys', 'get', longNamed.id, '--json');

      expect(output).toEqual(longNamed);
      expect(output).toEqual(await api(`/${longNamed.id}`));
    });
  });

  describe('updating', () => {
    it('keys update --name --status prints the key as updated', async () => {
      const result = await cli('keys', 'update', target.id, '--name', 'renamed by the CLI', '--status', 'inactive');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(`id:               ${target.id}\n`);
      expect(result.stdout).toContain('name:             renamed by the CLI\n');
      expect(result.stdout).toContain('status:           inactive\n');
      expect(result.stdout).toContain('workspace_id:     wrkspc_cli\n');
    });

    it('keys get after the update shows the new name and status', async () => {
      const output = await cliJson<ApiKey>('keys', 'get', target.id, '--json');

      expect(output).toEqual({ ...target, name: 'renamed by the CLI', status: 'inactive' });
    });

    it('keys update --status --json changes only the status', async () => {
      const output = await cliJson<ApiKey>('keys', 'update', target.id, '--status', 'archived', '--json');

      expect(output).toEqual({ ...target, name: 'renamed by the CLI', status: 'archived' });
      expect(await api(`/${target.id}`)).toEqual(output);
    });
  });

  describe.concurrent('failing', () => {
    it('keys get of an unknown ID exits 1 with the error type, message and request ID on stderr', async () => {
      const result = await cli('keys', 'get', 'apikey_missing');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /^apikeys: error: not_found_error: api_key_id: no API key with ID apikey_missing \(request req_[A-Za-z0-9]+\)\n$/,
      );
    });

    it('keys list with an unknown cursor exits 1 with the invalid_request_error of the API', async () => {
      const result = await cli('keys', 'list', '--after', 'apikey_missing');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*after_id/);
      expect(result.stderr).toMatch(REQUEST_ID);
    });

    it('a wrong --admin-key exits 1 with authentication_error and a hint, never printing the key', async () => {
      const wrong = `sk-adm-${'x'.repeat(43)}`;

      const result = await cli('keys', 'list', '--admin-key', wrong);

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: authentication_error: invalid x-api-key \(request req_\w+\)\n/);
      expect(result.stderr).toContain('apikeys: hint: check APIKEYS_ADMIN_KEY or --admin-key');
      expect(result.stderr).not.toContain(wrong);
    });

    it('a server that is down exits 1 saying the API cannot be reached and why', async () => {
      const baseUrl = `http://127.0.0.1:${await closedPort()}`;

      const result = await runCli(['keys', 'get', longNamed.id], { ...env, APIKEYS_BASE_URL: baseUrl });

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        new RegExp(`^apikeys: error: cannot reach the API at ${baseUrl}: connection refused\\n`),
      );
    });

    it('no admin key exits 2 and says how to create one', async () => {
      const result = await runCli(['keys', 'list'], { ...env, APIKEYS_ADMIN_KEY: undefined });

      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/an admin key is required: set APIKEYS_ADMIN_KEY or pass --admin-key/);
      expect(result.stderr).toContain('apikeys admin-keys create');
    });

    it('an admin key that cannot be sent as a header exits 2 without printing it', async () => {
      const result = await runCli(['keys', 'list'], { ...env, APIKEYS_ADMIN_KEY: 'sk-adm-secret\nvalue' });

      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/admin key .* must be printable ASCII/);
      expect(result.stderr).not.toContain('secret');
    });

    it.each([
      { case: 'a bad --status', args: ['list', '--status', 'revoked'], message: /'revoked' is invalid/ },
      { case: 'update without fields', args: ['update', 'apikey_x'], message: /nothing to update: pass --name/ },
      {
        case: 'both cursors',
        args: ['list', '--after', 'apikey_a', '--before', 'apikey_b'],
        message: /'--after <api_key_id>' cannot be used with option '--before <api_key_id>'/,
      },
      {
        case: 'both cursors, one in its earlier spelling',
        args: ['list', '--after', 'apikey_a', '--before-id', 'apikey_b'],
        message: /'--after <api_key_id>' cannot be used with option '--before-id <api_key_id>'/,
      },
      {
        case: 'one cursor in both spellings',
        args: ['list', '--after', 'apikey_a', '--after-id', 'apikey_b'],
        message: /'--after-id <api_key_id>' cannot be used with option '--after <api_key_id>'/,
      },
      {
        case: 'a base URL that is not http(s)',
        args: ['list', '--base-url', 'ftp://example.com'],
        message: /base URL .* must be an http:\/\/ or https:\/\/ URL/,
      },
    ])('$case exits 2 with a message on stderr', async ({ args, message }) => {
      const result = await cli('keys', ...args);

      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(message);
    });
  });
});
