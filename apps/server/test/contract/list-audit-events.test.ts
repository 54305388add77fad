import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  apiKeyPath,
  authHeaders,
  expectError,
  expectInternalError,
  expectMatchesSpec,
  expectUnavailable,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError, hashSecret } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const VERSION = LATEST_API_VERSION;
const EVENTS = '/v1/organizations/audit_events';

interface Event {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id?: string; name?: string | null };
  target: { type: string; id: string };
  changes: Record<string, { from: unknown; to: unknown }>;
  related: { type: string; id: string } | null;
  key_count: number | null;
  request_id: string | null;
  client: { ip_address: string | null; user_agent: string | null } | null;
}

interface EventPage {
  data: Event[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

// From 2026-10-21 on.
describe('listAuditEvents', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('audit tests');
  });
  afterAll(() => server.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const headers = (adminKey = org.adminKey, extra: Record<string, string> = {}) =>
    authHeaders(adminKey, { 'vendor-version': VERSION, 'user-agent': 'audit-tests/1.0', ...extra });

  /** A change through the API; returns the body and the request ID of the response. */
  async function change(path: string, body: unknown, adminKey = org.adminKey) {
    const { response, body: json } = await server.request(path, {
      method: 'POST',
      headers: headers(adminKey, { 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return {
      body: json as Record<string, unknown> & { id: string; key?: string },
      requestId: response.headers.get('request-id'),
    };
  }

  const createKey = (name: string, adminKey = org.adminKey) => change('/v1/organizations/api_keys', { name }, adminKey);

  async function list(query = '', adminKey = org.adminKey) {
    const result = await server.request(`${EVENTS}${query}`, { headers: headers(adminKey) });
    expectMatchesSpec('listAuditEvents', result.response, result.body, VERSION);
    return result;
  }

  async function page(query = '', adminKey = org.adminKey): Promise<EventPage> {
    const { response, body } = await list(query, adminKey);
    expect(response.status).toBe(200);
    return body as EventPage;
  }

  describe('200 a page of the audit trail, newest first [2026-10-21]', () => {
    it('records a create, an update and a rotation through the API: who, what, when and from where', async () => {
      const created = await createKey('audited');
      const updated = await change(apiKeyPath(created.body.id), { name: 'audited, renamed', status: 'inactive' });
      const rotated = await change(`${apiKeyPath(created.body.id)}/rotate`, { grace_period_seconds: 60 });

      const { data } = await page(`?target_id=${created.body.id}`);
      const newKey = (await page(`?target_id=${rotated.body.id}`)).data;

      const actor = { type: 'admin_key', id: org.adminKeyId };
      const client = { ip_address: '127.0.0.1', user_agent: 'audit-tests/1.0' };
      expect(data.map((event) => event.type)).toEqual(['api_key.rotated', 'api_key.updated', 'api_key.created']);
      expect(data[2]).toMatchObject({
        actor,
        target: { type: 'api_key', id: created.body.id },
        changes: { name: { from: null, to: 'audited' }, status: { from: null, to: 'active' } },
        related: null,
        key_count: null,
        request_id: created.requestId,
        client,
      });
      expect(data[1]).toMatchObject({
        actor,
        changes: { name: { from: 'audited', to: 'audited, renamed' }, status: { from: 'active', to: 'inactive' } },
        request_id: updated.requestId,
        client,
      });
      expect(Object.keys(data[1]?.changes ?? {}).sort()).toEqual(['name', 'status']);
      expect(data[0]).toMatchObject({
        actor,
        changes: {
          expires_at: { from: null, to: (rotated.body.rotated_api_key as { expires_at: string }).expires_at },
        },
        related: { type: 'api_key', id: rotated.body.id },
        request_id: rotated.requestId,
      });
      expect(newKey).toEqual([
        expect.objectContaining({
          type: 'api_key.created',
          related: { type: 'api_key', id: created.body.id },
          changes: { name: { from: null, to: 'audited, renamed' }, status: { from: null, to: 'active' } },
          request_id: rotated.requestId,
        }),
      ]);
      const occurred = data.map((event) => Date.parse(event.occurred_at));
      expect(occurred).toEqual([...occurred].sort((a, b) => b - a));
    });

    it('writes no event for an update that changes nothing', async () => {
      const created = await createKey('unchanged');
      await change(apiKeyPath(created.body.id), { name: 'unchanged', status: 'active' });
      await change(apiKeyPath(created.body.id), {});

      expect((await page(`?target_id=${created.body.id}`)).data.map((event) => event.type)).toEqual([
        'api_key.created',
      ]);
    });

    it('records an update through API version 2023-06-01 too', async () => {
      const created = await createKey('old client');
      await server.request(apiKeyPath(created.body.id), {
        method: 'POST',
        headers: authHeaders(org.adminKey, { 'content-type': 'application/json' }),
        body: JSON.stringify({ status: 'archived' }),
      });

      const [latest] = (await page(`?target_id=${created.body.id}&limit=1`)).data;
      expect(latest).toMatchObject({
        type: 'api_key.updated',
        changes: { status: { from: 'active', to: 'archived' } },
      });
    });

    it('never shows a secret or the hash of one', async () => {
      const created = await createKey('secretive');
      const rotated = await change(`${apiKeyPath(created.body.id)}/rotate`, {});
      const text = JSON.stringify(await page('?limit=1000'));

      for (const secret of [created.body.key, rotated.body.key, org.adminKey]) {
        expect(secret).toMatch(/^sk-/);
        expect(text).not.toContain(secret);
        expect(text).not.toContain(hashSecret(secret as string));
      }
    });

    it('pages forwards and backwards with the cursors, and says when there is more', async () => {
      const other = await server.createOrganization('paging');
      for (let i = 0; i < 7; i++) {
        await createKey(`paged ${i}`, other.adminKey);
      }
      const all = (await page('?limit=1000', other.adminKey)).data;
      // The keys, the admin key and the organization itself.
      expect(all.map((event) => event.type)).toEqual([
        ...Array(7).fill('api_key.created'),
        'admin_key.created',
        'organization.created',
      ]);

      const first = await page('?limit=3', other.adminKey);
      const second = await page(`?limit=3&after_id=${first.last_id}`, other.adminKey);
      const third = await page(`?limit=3&after_id=${second.last_id}`, other.adminKey);
      const back = await page(`?limit=3&before_id=${third.first_id}`, other.adminKey);

      expect([first, second, third].flatMap((p) => p.data)).toEqual(all);
      expect([first.has_more, second.has_more, third.has_more]).toEqual([true, true, false]);
      expect(await page(`?limit=3&after_id=${third.last_id}`, other.adminKey)).toMatchObject({
        data: [],
        has_more: false,
      });
      expect(first.first_id).toBe(all[0]?.id);
      expect(back).toEqual(second);
      expect(back.has_more).toBe(true);
    });

    it('filters by target, actor, type (one or several) and time, combined with AND', async () => {
      const other = await server.createOrganization('filters');
      const second = await server.store.createAdminKey({ organizationId: other.id, name: 'second admin' });
      const mine = await createKey('mine', other.adminKey);
      const theirs = await createKey('theirs', second.secret);
      await change(apiKeyPath(mine.body.id), { status: 'inactive' }, second.secret);
      const all = (await page('?limit=1000', other.adminKey)).data;
      const ids = (events: Event[]) => events.map((event) => event.id);
      const where = (keep: (event: Event) => boolean) => ids(all.filter(keep));
      const middle = all[2] as Event;

      expect(ids((await page(`?target_id=${mine.body.id}`, other.adminKey)).data)).toEqual(
        where((event) => event.target.id === mine.body.id),
      );
      expect(ids((await page(`?actor_id=${second.adminKey.id}`, other.adminKey)).data)).toEqual(
        where((event) => event.actor.id === second.adminKey.id),
      );
      expect(ids((await page('?type=api_key.updated', other.adminKey)).data)).toEqual(
        where((event) => event.type === 'api_key.updated'),
      );
      expect(ids((await page('?type=api_key.updated&type=admin_key.created', other.adminKey)).data)).toEqual(
        where((event) => ['api_key.updated', 'admin_key.created'].includes(event.type)),
      );
      expect(ids((await page(`?occurred_before=${middle.occurred_at}`, other.adminKey)).data)).toEqual(
        where((event) => event.occurred_at < middle.occurred_at),
      );
      expect(ids((await page(`?occurred_after=${middle.occurred_at}`, other.adminKey)).data)).toEqual(
        where((event) => event.occurred_at > middle.occurred_at),
      );
      expect(
        ids(
          (
            await page(
              `?actor_id=${second.adminKey.id}&type=api_key.created&target_id=${theirs.body.id}`,
              other.adminKey,
            )
          ).data,
        ),
      ).toEqual(where((event) => event.target.id === theirs.body.id && event.type === 'api_key.created'));
      // Empty filters mean no filter from 2026-10-21 on, as for the key list.
      expect(ids((await page('?target_id=&actor_id=&occurred_after=', other.adminKey)).data)).toEqual(ids(all));
    });

    it('shows the changes an operator made with the CLI, as the operator', async () => {
      const other = await server.createOrganization('operator');
      await server.store.setAdminKeyStatus(
        (
          await server.store.createAdminKey(
            { organizationId: other.id, name: 'spare' },
            { actor: { type: 'operator', name: 'alice' } },
          )
        ).adminKey.id,
        'disabled',
        { actor: { type: 'operator', name: 'alice' } },
      );

      const { data } = await page('?type=admin_key.created&type=admin_key.disabled', other.adminKey);

      expect(data[0]).toMatchObject({
        type: 'admin_key.disabled',
        actor: { type: 'operator', name: 'alice' },
        changes: { status: { from: 'active', to: 'disabled' } },
        request_id: null,
        client: null,
      });
    });

    it('answers an empty page with null IDs', async () => {
      expect(await page('?target_id=apikey_nothingHere0000000000000')).toEqual({
        data: [],
        has_more: false,
        first_id: null,
        last_id: null,
      });
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    const invalid = (message: RegExp | string) =>
      ({
        operationId: 'listAuditEvents',
        status: 400,
        type: 'invalid_request_error',
        message,
        version: VERSION,
      }) as const;

    it.each([
      ['both cursors', () => `?after_id=${'auditevt_x'}&before_id=auditevt_y`, /^before_id: cannot be combined/],
      [
        'a cursor that names no event',
        () => '?after_id=auditevt_0000000000000000000000000000',
        /^after_id: no audit event/,
      ],
      ['an unknown type', () => '?type=api_key.deleted', /^type\[0\]: must be one of/],
      [
        'more than 8 types',
        () => `?${Array(9).fill('type=api_key.created').join('&')}`,
        /^type: must NOT have more than 8 items/,
      ],
      ['a time without a zone', () => '?occurred_after=2026-11-01T00:00:00', /^occurred_after: must match pattern/],
      [
        'a date that does not exist',
        () => '?occurred_before=2026-02-30T00:00:00Z',
        /^occurred_before: must be an RFC 3339/,
      ],
      ['a limit of 0', () => '?limit=0', /^limit: must be >= 1/],
      ['an unknown parameter', () => '?status=active', /^status: unknown query parameter/],
      ['a repeated single-valued parameter', () => '?target_id=a&target_id=b', /^target_id: must be a single value/],
    ])('%s', async (_, query, message) => {
      expectError(await list(query()), invalid(message));
    });

    it("a cursor naming another organization's event, as if it did not exist", async () => {
      const other = await server.createOrganization('cursor owner');
      const [theirs] = (await page('', other.adminKey)).data;

      expectError(await list(`?after_id=${theirs?.id}`), invalid(`after_id: no audit event with ID ${theirs?.id}`));
    });

    it('a request of version 2023-06-01, naming the version that introduced the audit trail', async () => {
      const result = await server.request(EVENTS, { headers: authHeaders(org.adminKey) });

      expectError(result, {
        operationId: undefined,
        status: 400,
        type: 'invalid_request_error',
        message:
          'vendor-version: listAuditEvents is available from API version 2026-10-21; this request uses 2023-06-01',
      });
    });
  });

  describe('401 authentication_error [2026-10-21]', () => {
    it.each([
      ['no admin key', undefined, 'x-api-key header is required'],
      ['an unknown admin key', 'sk-adm-unknown', 'invalid x-api-key'],
    ])('%s', async (_, adminKey, message) => {
      const result = await server.request(EVENTS, {
        headers: adminKey ? headers(adminKey) : { 'vendor-version': VERSION },
      });

      expectError(result, {
        operationId: 'listAuditEvents',
        status: 401,
        type: 'authentication_error',
        message,
        version: VERSION,
      });
    });
  });

  describe('403 permission_error [2026-10-21]', () => {
    it('refuses a regular API key', async () => {
      const created = await createKey('regular');

      expectError(await list('', created.body.key), {
        operationId: 'listAuditEvents',
        status: 403,
        type: 'permission_error',
        message: /admin key/,
        version: VERSION,
      });
    });
  });

  describe('429 rate_limit_error [2026-10-21]', () => {
    it('refuses a request over the admin key budget with retry-after', async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 60, burst: 1, authFailuresPerMinute: 0 } });
      try {
        const get = () =>
          limited.request(EVENTS, { headers: authHeaders(limited.adminKey, { 'vendor-version': VERSION }) });
        expect((await get()).response.status).toBe(200);

        const result = await get();

        expectError(result, {
          operationId: 'listAuditEvents',
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this admin key/,
          version: VERSION,
        });
        expect(result.response.headers.get('retry-after')).toBe('1');
      } finally {
        await limited.close();
      }
    });
  });

  describe('500 api_error [2026-10-21]', () => {
    it('answers a generic error when the store fails, and logs the details', async () => {
      vi.spyOn(server.store, 'listAuditEvents').mockRejectedValueOnce(new Error('boom: audit index corrupt'));

      const result = await list();

      expectInternalError(server.logLines, result, 'boom: audit index corrupt');
    });
  });

  describe('503 service_unavailable_error [2026-10-21]', () => {
    it('answers 503 with retry-after when the database does not answer in time', async () => {
      const unavailable = new DatabaseUnavailableError('timeout', 'the database is unavailable (timeout): no answer');
      vi.spyOn(server.store, 'listAuditEvents').mockRejectedValueOnce(unavailable);

      expectUnavailable(server.logLines, await list(), 'listAuditEvents', VERSION);
    });
  });
});
