import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import { type AuditEvent, type CreatedApiKey, createAdminClient, type ListAuditEventsResponse } from '@apikeys/client';
import {
  API_VERSION,
  closedPort,
  DEFAULT_ORGANIZATION,
  type StartedServerProcess,
  startServerProcess,
} from '@apikeys/server/testing';
import { openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import { seedApiKeys, seedAuditEvents } from '@apikeys/store/seeding';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_EVENTS } from '../src/format/audit-event.js';
import { expectUsageError, osUser, REQUEST_ID } from './cli-output.js';
import { runCli, runCliJson, tempDatabase } from './run-cli.js';

const EVENTS_PATH = '/v1/organizations/audit_events';
const SEEDED_EVENTS = 150;
const HEADER = /^OCCURRED {2,}TYPE {2,}ACTOR {2,}TARGET {2,}CHANGES$/;

/** The events of JSON Lines output: one JSON object per line, every line ended. */
function jsonLines(stdout: string): AuditEvent[] {
  expect(stdout === '' || stdout.endsWith('\n')).toBe(true);
  return stdout
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as AuditEvent);
}

/** JSON Lines of `events`, as the CLI must print them. */
const asJsonLines = (events: readonly AuditEvent[]) => events.map((event) => `${JSON.stringify(event)}\n`).join('');

/** The cells of a table row, cut at the positions of the header's column names. */
function cells(header: string, row: string): Record<string, string> {
  const names = ['OCCURRED', 'TYPE', 'ACTOR', 'TARGET', 'CHANGES'];
  const starts = names.map((name) => header.indexOf(name));
  return Object.fromEntries(
    names.map((name, index) => [name, row.slice(starts[index], starts[index + 1] ?? row.length).trimEnd()]),
  );
}

// `apikeys audit list` and `apikeys keys history` against the real server, started as a child process over a
// database that holds seeded events, then the changes made in `beforeAll` through the API and by an operator command.
// As in api-commands.test.ts, the API commands get a DATABASE_URL that must stay unused.
describe('apikeys audit commands against the real server', () => {
  const db = tempDatabase();
  const untouched = join(db.dir, 'never-opened.sqlite');
  let server: StartedServerProcess;
  let adminKey: string;
  let adminKeyId: string;
  let env: NodeJS.ProcessEnv;
  /** A key with a history: created, renamed and deactivated through the API, then rotated. */
  let audited: CreatedApiKey;
  let replacement: CreatedApiKey;
  /** A key created by the operator command `keys create`. */
  let operatorKeyId: string;
  /** A key seeded in bulk: it has no event of its own. */
  let quietKeyId: string;
  /** Every event of the organization, newest first, as the API returns them. */
  let all: AuditEvent[];

  const cli = (...args: string[]) => runCli(args, env);
  /** The API's own page for a query string, for checking that the commands print exactly what it returns. */
  const api = async (query: string): Promise<ListAuditEventsResponse> => {
    const response = await fetch(`${server.baseUrl}${EVENTS_PATH}${query}`, {
      headers: { 'x-api-key': adminKey, 'vendor-version': LATEST_API_VERSION },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as ListAuditEventsResponse;
  };
  /** Runs the CLI, expects success with nothing on stderr, and returns its JSON Lines. */
  const cliLines = async (...args: string[]) => {
    const result = await cli(...args);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return { events: jsonLines(result.stdout), stdout: result.stdout };
  };

  beforeAll(async () => {
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { store } = await openMigratedStore(parseDatabaseUrl(db.env.DATABASE_URL));
    try {
      const created = await store.createAdminKey({ organizationId, name: 'audit tests' });
      adminKey = created.secret;
      adminKeyId = created.adminKey.id;
      await seedAuditEvents(store, { organizationId, count: SEEDED_EVENTS, targets: 5, actors: 3, seed: 3 });
      await seedApiKeys(store, { organizationId, count: 1, workspaces: 0, users: 1, seed: 1 });
      const page = await store.listApiKeys({ organizationId, limit: 1 });
      quietKeyId = page.kind === 'page' ? (page.keys[0]?.id ?? '') : '';
    } finally {
      await store.close();
    }
    server = await startServerProcess({ env: { DATABASE_URL: db.env.DATABASE_URL } });
    env = { APIKEYS_BASE_URL: server.baseUrl, APIKEYS_ADMIN_KEY: adminKey, DATABASE_URL: `file:${untouched}` };

    const client = createAdminClient({ baseUrl: server.baseUrl, apiKey: adminKey });
    audited = await client.apiKeys.create({ name: 'audited' });
    await client.apiKeys.update(audited.id, { name: 'audited, renamed' });
    await client.apiKeys.update(audited.id, { status: 'inactive' });
    replacement = await client.apiKeys.rotate(audited.id, { grace_period_seconds: 3600 });
    // An operator's change, on the database the server runs on.
    operatorKeyId = (await runCliJson<{ id: string }>(['keys', 'create', '--name', 'by an operator'], db.env)).id;

    const page = await api('?limit=1000');
    expect(page.has_more).toBe(false);
    all = page.data;
    // The admin key, the seeded events, the seeding of the keys, five events of the API and one of the operator.
    expect(all).toHaveLength(1 + SEEDED_EVENTS + 1 + 5 + 1);
  });

  afterAll(async () => {
    await server?.stop();
    expect(existsSync(untouched)).toBe(false);
    db.remove();
  });

  describe.concurrent('audit list', () => {
    it('prints the newest 20 events as a table, then the command for the next page', async () => {
      const result = await cli('audit', 'list');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.trimEnd().split('\n');
      const header = lines[0] ?? '';
      expect(header).toMatch(HEADER);
      const rows = lines.slice(1, 21);
      expect(rows.map((row) => cells(header, row).OCCURRED)).toEqual(all.slice(0, 20).map((e) => e.occurred_at));
      expect(rows.map((row) => cells(header, row).TYPE)).toEqual(all.slice(0, 20).map((e) => e.type));
      expect(lines.slice(21)).toEqual(['', `next page: apikeys audit list --after ${all[19]?.id}`]);
    });

    it('shows who changed what: the admin key or operator:<OS user>, the target, and the changes compactly', async () => {
      const result = await cli('audit', 'list', '--limit', '10');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const [header = '', ...rows] = result.stdout.split('\n');
      const table = rows.filter((row) => row.startsWith('20')).map((row) => cells(header, row));
      const byOperator = table.find((row) => row.TARGET === operatorKeyId);
      expect(byOperator).toEqual({
        OCCURRED: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        TYPE: 'api_key.created',
        ACTOR: osUser() === null ? 'operator' : `operator:${osUser()}`,
        TARGET: operatorKeyId,
        CHANGES: 'name: null → "by an operator"; status: null → active',
      });
      const ofAudited = table.filter((row) => row.TARGET === audited.id);
      expect(ofAudited.map((row) => [row.TYPE, row.ACTOR, row.CHANGES])).toEqual([
        ['api_key.rotated', adminKeyId, expect.stringMatching(/^expires_at: null → \S+Z; related: apikey_\w+$/)],
        ['api_key.updated', adminKeyId, 'status: active → inactive'],
        ['api_key.updated', adminKeyId, 'name: "audited" → "audited, renamed"'],
        ['api_key.created', adminKeyId, 'name: null → "audited"; status: null → active'],
      ]);
      expect(ofAudited[0]?.CHANGES).toContain(`related: ${replacement.id}`);
    });

    it('--json prints JSON Lines: each line exactly the API event, in the order of the API', async () => {
      const { stdout } = await cliLines('audit', 'list', '--json');

      expect(stdout).toBe(asJsonLines((await api('')).data));
      expect(stdout.split('\n')).toHaveLength(21);
    });

    it('--after-id prints the page after the cursor, as the API does', async () => {
      const { events } = await cliLines('audit', 'list', '--json', '--limit', '5', '--after-id', all[4]?.id ?? '');

      expect(events).toEqual(all.slice(5, 10));
      expect(events).toEqual((await api(`?limit=5&after_id=${all[4]?.id}`)).data);
    });

    it('--before-id prints the events just newer than the cursor, and the table ends with the newer page', async () => {
      const { events } = await cliLines('audit', 'list', '--json', '--limit', '3', '--before-id', all[10]?.id ?? '');
      const table = await cli('audit', 'list', '--limit', '3', '--before-id', all[10]?.id ?? '');

      expect(events).toEqual(all.slice(7, 10));
      expect(table.stdout.trimEnd().split('\n').at(-1)).toBe(
        `newer events: apikeys audit list --limit 3 --before ${all[7]?.id}`,
      );
    });

    it.each([
      ['--after', 5, 10],
      ['--before', 7, 10],
    ] as const)(
      '%s, the spelling of every list command, prints the same page as its -id spelling',
      async (flag, from, to) => {
        const cursor = (flag === '--after' ? all[4]?.id : all[10]?.id) ?? '';
        const { events } = await cliLines(
          'audit',
          'list',
          '--json',
          '--limit',
          flag === '--after' ? '5' : '3',
          flag,
          cursor,
        );
        const { events: earlier } = await cliLines(
          ...['audit', 'list', '--json', '--limit', flag === '--after' ? '5' : '3', `${flag}-id`, cursor],
        );

        expect(events).toEqual(all.slice(from, to));
        expect(events).toEqual(earlier);
      },
    );

    it('--target-id prints the history of one key, newest first', async () => {
      const { events } = await cliLines('audit', 'list', '--json', '--target-id', audited.id);

      expect(events.map((event) => event.type)).toEqual([
        'api_key.rotated',
        'api_key.updated',
        'api_key.updated',
        'api_key.created',
      ]);
      expect(events).toEqual((await api(`?target_id=${audited.id}`)).data);
    });

    it('--actor-id prints the changes of one admin key only', async () => {
      const { events } = await cliLines('audit', 'list', '--json', '--limit', '1000', '--actor-id', adminKeyId);

      expect(events).toHaveLength(5);
      expect(events.every((event) => event.actor.type === 'admin_key' && event.actor.id === adminKeyId)).toBe(true);
      expect(events).toEqual((await api(`?limit=1000&actor_id=${adminKeyId}`)).data);
    });

    it('--type repeated prints the events of any of the types', async () => {
      const { events } = await cliLines(
        ...['audit', 'list', '--json', '--limit', '1000'],
        ...['--type', 'api_key.seeded', '--type', 'admin_key.created'],
      );

      expect(events.map((event) => event.type)).toEqual(['api_key.seeded', 'admin_key.created']);
      expect(events).toEqual((await api('?limit=1000&type=api_key.seeded&type=admin_key.created')).data);
    });

    it('--occurred-after and --occurred-before are exclusive bounds', async () => {
      // Not the two events of the rotation (all[1] and all[2]), which may share a microsecond.
      const after = all[5]?.occurred_at ?? '';
      const before = all[3]?.occurred_at ?? '';

      const newer = await cliLines('audit', 'list', '--json', '--occurred-after', after);
      const older = await cliLines('audit', 'list', '--json', '--limit', '1000', '--occurred-before', before);
      const between = await cliLines('audit', 'list', '--json', '--occurred-after', after, '--occurred-before', before);

      expect(newer.events).toEqual(all.slice(0, 5));
      expect(older.events).toEqual(all.slice(4));
      expect(between.events).toEqual(all.slice(4, 5));
    });

    it('combines the filters with AND', async () => {
      const { events } = await cliLines(
        ...['audit', 'list', '--json', '--target-id', audited.id, '--actor-id', adminKeyId],
        ...['--type', 'api_key.updated', '--occurred-after', all.at(-1)?.occurred_at ?? ''],
      );

      expect(events.map((event) => event.changes)).toEqual([
        { status: { from: 'active', to: 'inactive' } },
        { name: { from: 'audited', to: 'audited, renamed' } },
      ]);
    });

    it('the next-page command of a filtered table keeps every filter and the limit', async () => {
      const result = await cli(
        'audit',
        'list',
        '--type',
        'api_key.updated',
        '--type',
        'api_key.created',
        '--limit',
        '2',
      );

      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(
        /^next page: apikeys audit list --type api_key.updated --type api_key.created --limit 2 --after auditevt_\w+$/,
      );
    });

    it('--all --json --limit 7 walks every page and prints every event once, newest first', async () => {
      const { stdout, events } = await cliLines('audit', 'list', '--all', '--json', '--limit', '7');

      expect(events).toHaveLength(all.length);
      expect(new Set(events.map((event) => event.id)).size).toBe(all.length);
      expect(stdout).toBe(asJsonLines(all));
    });

    it('--all --limit 9 prints one table of every event, with one header and no next-page command', async () => {
      const result = await cli('audit', 'list', '--all', '--limit', '9');

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const lines = result.stdout.trimEnd().split('\n');
      const header = lines[0] ?? '';
      expect(header).toMatch(HEADER);
      expect(lines.slice(1).map((row) => cells(header, row).OCCURRED)).toEqual(all.map((e) => e.occurred_at));
      expect(result.stdout).not.toContain('next page');
    });

    it('--all with a filter sends it on every page and prints exactly the matching events', async () => {
      const { events } = await cliLines(
        'audit',
        'list',
        '--all',
        '--json',
        '--limit',
        '10',
        '--type',
        'api_key.updated',
      );

      const expected = all.filter((event) => event.type === 'api_key.updated');
      expect(expected.length).toBeGreaterThan(20);
      expect(events).toEqual(expected);
    });

    it('--all --before-id walks towards the newest event, printing the events oldest first', async () => {
      const oldest = all.at(-1)?.id ?? '';

      const { events } = await cliLines('audit', 'list', '--all', '--json', '--limit', '11', '--before-id', oldest);

      expect(events).toEqual(all.slice(0, -1).reverse());
    });

    it('prints that no event matched, in a table; nothing with --json', async () => {
      const table = await cli('audit', 'list', '--all', '--target-id', 'apikey_without_events');
      const json = await cli('audit', 'list', '--json', '--target-id', 'apikey_without_events');

      expect(table).toEqual({ code: 0, stdout: `${NO_EVENTS}\n`, stderr: '' });
      expect(json).toEqual({ code: 0, stdout: '', stderr: '' });
    });
  });

  describe.concurrent('audit list failing', () => {
    it('a cursor that names no event exits 1 with the invalid_request_error of the API', async () => {
      const result = await cli('audit', 'list', '--after-id', 'auditevt_missing');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /^apikeys: error: invalid_request_error: after_id: no audit event with ID auditevt_missing /,
      );
      expect(result.stderr).toMatch(REQUEST_ID);
    });

    it('a time the API refuses exits 1 naming the parameter', async () => {
      const result = await cli('audit', 'list', '--occurred-after', '2026-11-01T00:00:00.1234567Z');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: invalid_request_error: .*occurred_after/);
    });

    it('a wrong admin key exits 1 with authentication_error and a hint', async () => {
      const result = await runCli(['audit', 'list', '--all'], {
        ...env,
        APIKEYS_ADMIN_KEY: `sk-adm-${'x'.repeat(43)}`,
      });

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: authentication_error: /);
      expect(result.stderr).toContain('apikeys: hint: check APIKEYS_ADMIN_KEY or --admin-key');
    });

    it('a server that is down exits 1 saying the API cannot be reached', async () => {
      const baseUrl = `http://127.0.0.1:${await closedPort()}`;

      const result = await runCli(['audit', 'list', '--all', '--json'], { ...env, APIKEYS_BASE_URL: baseUrl });

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        new RegExp(`^apikeys: error: cannot reach the API at ${baseUrl}: connection refused\\n`),
      );
    });

    it.each([
      {
        case: 'API version 2023-06-01',
        args: ['--api-version', API_VERSION],
        message: /audit list calls listAuditEvents, available from API version 2026-10-21; .* is 2023-06-01/,
      },
      {
        case: 'an unknown --type',
        args: ['--type', 'api_key.deleted'],
        message: /argument 'api_key.deleted' is invalid\. Allowed choices are api_key.created, /,
      },
      {
        case: 'both cursors',
        args: ['--after-id', 'auditevt_a', '--before-id', 'auditevt_b'],
        message: /'--after-id <audit_event_id>' cannot be used with option '--before-id <audit_event_id>'/,
      },
      {
        case: 'both cursors, in the spelling of every list command',
        args: ['--after', 'auditevt_a', '--before', 'auditevt_b'],
        message: /'--after <audit_event_id>' cannot be used with option '--before <audit_event_id>'/,
      },
      {
        case: 'a time without a time zone',
        args: ['--occurred-after', '2026-11-01T00:00:00'],
        message: /--occurred-after.*RFC 3339/,
      },
      { case: 'a --limit over the maximum', args: ['--limit', '1001'], message: /must be between 1 and 1000/ },
    ])('$case exits 2 with a message on stderr, sending nothing', async ({ args, message }) => {
      expectUsageError(await cli('audit', 'list', ...args), message);
    });
  });

  describe.concurrent('keys history', () => {
    it('prints the events of the key as a table, oldest first', async () => {
      const result = await cli('keys', 'history', audited.id);

      expect(result).toMatchObject({ code: 0, stderr: '' });
      const [header = '', ...rows] = result.stdout.trimEnd().split('\n');
      expect(header).toMatch(HEADER);
      expect(rows.map((row) => cells(header, row))).toEqual(
        [
          ['api_key.created', 'name: null → "audited"; status: null → active'],
          ['api_key.updated', 'name: "audited" → "audited, renamed"'],
          ['api_key.updated', 'status: active → inactive'],
          ['api_key.rotated', expect.stringContaining(`related: ${replacement.id}`)],
        ].map(([type, changes], index) => ({
          OCCURRED: all.filter((event) => event.target.id === audited.id).reverse()[index]?.occurred_at,
          TYPE: type,
          ACTOR: adminKeyId,
          TARGET: audited.id,
          CHANGES: changes,
        })),
      );
    });

    it('--json prints the JSON Lines of the API events, oldest first', async () => {
      const { stdout } = await cliLines('keys', 'history', audited.id, '--json');

      expect(stdout).toBe(asJsonLines((await api(`?target_id=${audited.id}`)).data.reverse()));
    });

    it.each(['1', '3'])('fetches every page with --limit %s, printing the same history', async (limit) => {
      const { stdout, events } = await cliLines('keys', 'history', audited.id, '--json', '--limit', limit);

      expect(events).toHaveLength(4);
      expect(stdout).toBe(asJsonLines((await api(`?target_id=${audited.id}`)).data.reverse()));
    });

    it("shows an operator's change as operator:<OS user>", async () => {
      const { events } = await cliLines('keys', 'history', operatorKeyId, '--json');

      expect(events).toEqual([
        expect.objectContaining({
          type: 'api_key.created',
          actor: { type: 'operator', name: osUser() },
          request_id: null,
          client: null,
        }),
      ]);
    });

    it('says so for a key without events (a seeded one)', async () => {
      const result = await cli('keys', 'history', quietKeyId);

      expect(result).toEqual({ code: 0, stdout: `${NO_EVENTS}\n`, stderr: '' });
    });

    it('an unknown key exits 1 with the not_found_error of the API', async () => {
      const result = await cli('keys', 'history', 'apikey_missing');

      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(/^apikeys: error: not_found_error: api_key_id: no API key with ID apikey_missing /);
    });

    it('API version 2023-06-01 exits 2 naming the version it needs', async () => {
      expectUsageError(
        await cli('keys', 'history', audited.id, '--api-version', API_VERSION),
        /keys history calls listAuditEvents, available from API version 2026-10-21/,
      );
    });
  });
});
