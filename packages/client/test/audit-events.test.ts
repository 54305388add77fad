import { API_VERSION, LATEST_API_VERSION, type v2026_10_21 } from '@apikeys/api-types';
import { seedAuditEvents, startTestServer, type TestOrganization, type TestServer } from '@apikeys/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AdminClient,
  type AuditEvent,
  AuditEventPage,
  type CreatedApiKey,
  createAdminClient,
  InvalidRequestError,
  type ListAuditEventsQuery,
  NotFoundError,
  UnsupportedOperationError,
} from '../src/index.js';
import { failure } from './support/failure.js';
import { observedFetch } from './support/observed-fetch.js';
import { errorBody, type ScriptedServer, startScriptedServer } from './support/scripted-server.js';

// The audit trail (listAuditEvents, getAuditEvent; 2026-10-21) through the client, against the real server. One
// organization holds a small trail of real changes, made in `beforeAll` through the API and the store; another holds
// a long seeded trail for the page walks.

type GeneratedAuditEvent = v2026_10_21.components['schemas']['AuditEvent'];

const EVENT_ID = /^auditevt_[0-9a-f]{14}[A-Za-z0-9]{16}$/;
const MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const SEEDED_EVENTS = 100;
const LIMIT = 7;

let server: TestServer;
let organization: TestOrganization;
let client: AdminClient;
let secondAdminKeyId: string;
let alpha: CreatedApiKey;
let beta: CreatedApiKey;
let replacement: CreatedApiKey;
/** The organization's whole trail, newest first, as one page of the API returns it. */
let trail: AuditEvent[];

async function collect(events: AsyncIterable<AuditEvent>): Promise<AuditEvent[]> {
  const collected: AuditEvent[] = [];
  for await (const event of events) {
    collected.push(event);
  }
  return collected;
}

const ids = (events: readonly AuditEvent[]) => events.map((event) => event.id);

/** `type target` of each event, to compare a trail with what was done. */
const summary = (events: readonly AuditEvent[]) => events.map((event) => `${event.type} ${event.target.id}`);

/** An event of the trail, failing when there is none at `index`. */
function at(index: number): AuditEvent {
  const event = trail[index];
  if (event === undefined) {
    throw new Error(`the trail has no event ${index}`);
  }
  return event;
}

/** The same moment as an `occurred_at` (UTC, microseconds), written with a +02:00 offset. */
function withOffset(occurredAt: string): string {
  const [, seconds, fraction] = /^(.{19})(\.\d{6})Z$/.exec(occurredAt) ?? [];
  if (seconds === undefined || fraction === undefined) {
    throw new Error(`not a timestamp of the API: ${occurredAt}`);
  }
  const local = new Date(Date.parse(`${seconds}Z`) + 2 * 3_600_000).toISOString().slice(0, 19);
  return `${local}${fraction}+02:00`;
}

function clientWithLog(apiKey = organization.adminKey) {
  const { fetch, sent } = observedFetch();
  return { client: createAdminClient({ baseUrl: server.baseUrl, apiKey, fetch }), sent };
}

beforeAll(async () => {
  server = await startTestServer();
  organization = await server.createOrganization('audit trail');
  client = createAdminClient({ baseUrl: server.baseUrl, apiKey: organization.adminKey });
  const second = await server.store.createAdminKey(
    { organizationId: organization.id, name: 'second admin' },
    { actor: { type: 'operator', name: 'alice' } },
  );
  secondAdminKeyId = second.adminKey.id;
  const secondClient = createAdminClient({ baseUrl: server.baseUrl, apiKey: second.secret });
  alpha = await client.apiKeys.create({ name: 'alpha' });
  beta = await client.apiKeys.create({ name: 'beta' });
  await client.apiKeys.update(alpha.id, { name: 'alpha 2' });
  await secondClient.apiKeys.update(alpha.id, { status: 'inactive' });
  replacement = await client.apiKeys.rotate(beta.id);
  const page = await client.auditEvents.list({ limit: 1000 });
  expect(page.hasMore).toBe(false);
  trail = page.data;
});

afterAll(async () => {
  await server?.close();
});

describe('auditEvents.list', () => {
  it('returns the trail newest first: every change, through the API or the store, once', async () => {
    const page = await client.auditEvents.list();

    expect(page).toBeInstanceOf(AuditEventPage);
    expect(page.toJSON()).toEqual({ data: trail, has_more: false, first_id: trail[0]?.id, last_id: trail.at(-1)?.id });
    expect(page.requestId).toMatch(/^req_[A-Za-z0-9]{24}$/);
    expect(trail.every((event) => EVENT_ID.test(event.id) && MICROS.test(event.occurred_at))).toBe(true);
    expect(ids(trail)).toEqual(ids(trail).toSorted().reverse());
    // A rotation writes its two events in one transaction, possibly in the same microsecond: their order is free.
    expect(new Set(summary(trail.slice(0, 2)))).toEqual(
      new Set([`api_key.rotated ${beta.id}`, `api_key.created ${replacement.id}`]),
    );
    expect(summary(trail.slice(2))).toEqual([
      `api_key.updated ${alpha.id}`,
      `api_key.updated ${alpha.id}`,
      `api_key.created ${beta.id}`,
      `api_key.created ${alpha.id}`,
      `admin_key.created ${secondAdminKeyId}`,
      `admin_key.created ${organization.adminKeyId}`,
      `organization.created ${organization.id}`,
    ]);
  });

  it('records who made each change, what it changed and through which request', () => {
    const [statusChange, rename] = trail.slice(2, 4);

    expect(statusChange).toEqual({
      id: expect.stringMatching(EVENT_ID),
      type: 'api_key.updated',
      occurred_at: expect.stringMatching(MICROS),
      actor: { type: 'admin_key', id: secondAdminKeyId },
      target: { type: 'api_key', id: alpha.id },
      changes: { status: { from: 'active', to: 'inactive' } },
      related: null,
      key_count: null,
      request_id: expect.stringMatching(/^req_[A-Za-z0-9]{24}$/),
      client: { ip_address: expect.stringContaining('127.0.0.1'), user_agent: expect.any(String) },
    });
    expect(rename).toMatchObject({
      actor: { type: 'admin_key', id: organization.adminKeyId },
      changes: { name: { from: 'alpha', to: 'alpha 2' } },
    });
    expect(trail.find((event) => event.type === 'api_key.rotated')).toMatchObject({
      target: { type: 'api_key', id: beta.id },
      related: { type: 'api_key', id: replacement.id },
    });
    expect(trail.at(-1)).toEqual({
      id: expect.stringMatching(EVENT_ID),
      type: 'organization.created',
      occurred_at: expect.stringMatching(MICROS),
      actor: { type: 'operator', name: null },
      target: { type: 'organization', id: organization.id },
      changes: { name: { from: null, to: 'audit trail' } },
      related: null,
      key_count: null,
      request_id: null,
      client: null,
    });
    expect(trail.at(-3)).toMatchObject({
      type: 'admin_key.created',
      actor: { type: 'operator', name: 'alice' },
      changes: { name: { from: null, to: 'second admin' }, status: { from: null, to: 'active' } },
    });
  });

  it('sends the version and the admin key, and limit as a query parameter', async () => {
    const { client: observed, sent } = clientWithLog();

    const page = await observed.auditEvents.list({ limit: 2 });

    expect(ids(page.data)).toEqual(ids(trail.slice(0, 2)));
    expect(page.hasMore).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url.pathname).toBe('/v1/organizations/audit_events');
    expect(sent[0]?.url.search).toBe('?limit=2');
    expect(sent[0]?.headers.get('vendor-version')).toBe(LATEST_API_VERSION);
    expect(sent[0]?.headers.get('x-api-key')).toBe(organization.adminKey);
  });

  it('returns an empty page when no event matches', async () => {
    const page = await client.auditEvents.list({ target_id: 'apikey_without_events' });

    expect(page.toJSON()).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    await expect(page.nextPage()).resolves.toBeNull();
    await expect(page.previousPage()).resolves.toBeNull();
  });

  it('shows only the events of its own organization', async () => {
    const other = await server.createOrganization('someone else');
    const theirs = createAdminClient({ baseUrl: server.baseUrl, apiKey: other.adminKey });

    const page = await theirs.auditEvents.list({ limit: 1000 });

    expect(summary(page.data)).toEqual([`admin_key.created ${other.adminKeyId}`, `organization.created ${other.id}`]);
    await expect(theirs.auditEvents.list({ target_id: alpha.id })).resolves.toMatchObject({ data: [] });
  });
});

describe('auditEvents.list filters', () => {
  it('target_id: the history of one key, newest first', async () => {
    const page = await client.auditEvents.list({ target_id: alpha.id });

    expect(page.data).toEqual(trail.filter((event) => event.target.id === alpha.id));
    expect(summary(page.data)).toEqual([
      `api_key.updated ${alpha.id}`,
      `api_key.updated ${alpha.id}`,
      `api_key.created ${alpha.id}`,
    ]);
  });

  it('actor_id: the changes one admin key made', async () => {
    const page = await client.auditEvents.list({ actor_id: secondAdminKeyId });

    expect(page.data).toEqual([at(2)]);
  });

  it('type: one type, sent as one type parameter', async () => {
    const { client: observed, sent } = clientWithLog();

    const page = await observed.auditEvents.list({ type: 'api_key.updated' });

    expect(page.data).toEqual(trail.filter((event) => event.type === 'api_key.updated'));
    expect(page.data).toHaveLength(2);
    expect(sent[0]?.url.searchParams.getAll('type')).toEqual(['api_key.updated']);
    expect(page.query).toEqual({ type: 'api_key.updated' });
  });

  it('type: a list, sent exploded (type=a&type=b), matching any of them', async () => {
    const { client: observed, sent } = clientWithLog();

    const page = await observed.auditEvents.list({ type: ['api_key.rotated', 'organization.created'] });

    expect(summary(page.data)).toEqual([`api_key.rotated ${beta.id}`, `organization.created ${organization.id}`]);
    expect(sent[0]?.url.search).toBe('?type=api_key.rotated&type=organization.created');
  });

  it('occurred_after: strictly after the moment', async () => {
    const page = await client.auditEvents.list({ occurred_after: at(4).occurred_at });

    expect(page.data).toEqual(trail.slice(0, 4));
  });

  it('occurred_before: strictly before the moment, also written with an offset (its + sent as %2B)', async () => {
    const { client: observed, sent } = clientWithLog();
    const moment = withOffset(at(4).occurred_at);

    const page = await observed.auditEvents.list({ occurred_before: moment });

    expect(page.data).toEqual(trail.slice(5));
    expect(sent[0]?.url.search).toContain('%2B02%3A00');
    expect(sent[0]?.url.searchParams.get('occurred_before')).toBe(moment);
  });

  it('combines every filter with AND', async () => {
    const page = await client.auditEvents.list({
      target_id: alpha.id,
      actor_id: organization.adminKeyId,
      type: ['api_key.updated', 'api_key.created'],
      occurred_after: at(5).occurred_at,
      occurred_before: at(2).occurred_at,
    });

    expect(page.data).toEqual([at(3)]);
    expect(page.data[0]?.changes).toEqual({ name: { from: 'alpha', to: 'alpha 2' } });
  });

  it('refuses a malformed time with an InvalidRequestError naming the parameter', async () => {
    const error = await failure(client.auditEvents.list({ occurred_after: 'yesterday' }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/occurred_after/);
  });
});

describe('auditEvents.list cursors', () => {
  it('nextPage follows after_id = last_id, previousPage before_id = first_id, with the same filters and limit', async () => {
    const first = await client.auditEvents.list({ limit: 3 });

    const second = await first.nextPage();
    const back = await second?.previousPage();

    expect(ids(first.data)).toEqual(ids(trail.slice(0, 3)));
    expect(await first.previousPage()).toBeNull();
    expect(second).toBeInstanceOf(AuditEventPage);
    expect(second?.query).toEqual({ limit: 3, after_id: at(2).id });
    expect(ids(second?.data ?? [])).toEqual(ids(trail.slice(3, 6)));
    expect(back?.query).toEqual({ limit: 3, before_id: at(3).id });
    expect(ids(back?.data ?? [])).toEqual(ids(trail.slice(0, 3)));
  });

  it('after_id returns the events older than the cursor', async () => {
    const page = await client.auditEvents.list({ after_id: at(5).id });

    expect(page.data).toEqual(trail.slice(6));
    expect(page.hasMore).toBe(false);
    expect(page.direction).toBe('after');
  });

  it('before_id returns the limit events just newer than the cursor, still newest first', async () => {
    const page = await client.auditEvents.list({ before_id: at(5).id, limit: 2 });

    expect(page.data).toEqual(trail.slice(3, 5));
    expect(page.hasMore).toBe(true);
    expect(page.direction).toBe('before');
    const newer = await page.previousPage();
    expect(newer?.data).toEqual(trail.slice(1, 3));
  });

  it('positions a filtered page by a cursor event that does not match the filters', async () => {
    // at(4) is the creation of beta; the only event of alpha older than it is alpha's creation.
    const page = await client.auditEvents.list({ target_id: alpha.id, after_id: at(4).id });

    expect(summary(page.data)).toEqual([`api_key.created ${alpha.id}`]);
    expect(page.data).toEqual([at(5)]);
  });

  it('refuses a cursor that names no event with an InvalidRequestError', async () => {
    const error = await failure(client.auditEvents.list({ after_id: 'auditevt_missing' }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(error.message).toMatch(/after_id/);
  });
});

describe('auditEvents.listAll', () => {
  let pagesAdminKey: string;
  /** Every event of the seeded organization, newest first, in one request. */
  let seeded: AuditEvent[];

  const pagesClient = () => clientWithLog(pagesAdminKey);

  beforeAll(async () => {
    const pages = await server.createOrganization('audit pages');
    pagesAdminKey = pages.adminKey;
    await seedAuditEvents(server.store, {
      organizationId: pages.id,
      count: SEEDED_EVENTS,
      targets: 4,
      actors: 3,
      seed: 5,
    });
    const page = await createAdminClient({ baseUrl: server.baseUrl, apiKey: pagesAdminKey }).auditEvents.list({
      limit: 1000,
    });
    expect(page.hasMore).toBe(false);
    seeded = page.data;
    // The seeded events, the organization's creation and its admin key's.
    expect(seeded).toHaveLength(SEEDED_EVENTS + 2);
  });

  it('forwards: yields every event once, newest first, following after_id = last_id page after page', async () => {
    const { client: observed, sent } = pagesClient();

    const events = await collect(observed.auditEvents.listAll({ limit: LIMIT }));

    expect(ids(events)).toEqual(ids(seeded));
    expect(sent).toHaveLength(Math.ceil(seeded.length / LIMIT));
    expect(sent[0]?.url.searchParams.has('after_id')).toBe(false);
    for (const [index, request] of sent.entries()) {
      expect(request.url.searchParams.get('limit')).toBe(String(LIMIT));
      expect(request.url.searchParams.has('before_id')).toBe(false);
      if (index > 0) {
        expect(request.url.searchParams.get('after_id')).toBe(seeded[index * LIMIT - 1]?.id);
      }
    }
  });

  it('backwards from a before_id: yields every newer event once, oldest first, following before_id = first_id', async () => {
    const { client: observed, sent } = pagesClient();
    const oldest = seeded.at(-1)?.id ?? '';

    const events = await collect(observed.auditEvents.listAll({ before_id: oldest, limit: LIMIT }));

    expect(ids(events)).toEqual(ids(seeded.slice(0, -1)).reverse());
    expect(sent).toHaveLength(Math.ceil((seeded.length - 1) / LIMIT));
    expect(sent[0]?.url.searchParams.get('before_id')).toBe(oldest);
    expect(sent.every((request) => !request.url.searchParams.has('after_id'))).toBe(true);
  });

  it('forwards with filters: sends them on every page and yields exactly the matching events', async () => {
    const { client: observed, sent } = pagesClient();
    const expected = seeded.filter((event) => event.type === 'api_key.updated');

    const events = await collect(observed.auditEvents.listAll({ type: 'api_key.updated', limit: 5 }));

    expect(expected.length).toBeGreaterThan(10);
    expect(ids(events)).toEqual(ids(expected));
    expect(sent.length).toBeGreaterThan(2);
    expect(sent.every((request) => request.url.searchParams.getAll('type').join() === 'api_key.updated')).toBe(true);
  });

  it('backwards with a filter: yields the matching events newer than the cursor, oldest first', async () => {
    const { client: observed, sent } = pagesClient();
    const target = seeded.find((event) => event.target.id.startsWith('apikey_seed'))?.target.id ?? '';
    const cursor = seeded.at(-1)?.id ?? '';
    const expected = seeded.filter((event) => event.target.id === target && event.id !== cursor).reverse();

    const events = await collect(observed.auditEvents.listAll({ target_id: target, before_id: cursor, limit: 4 }));

    expect(expected.length).toBeGreaterThan(8);
    expect(ids(events)).toEqual(ids(expected));
    expect(sent).toHaveLength(Math.ceil(expected.length / 4));
    expect(sent.every((request) => request.url.searchParams.get('target_id') === target)).toBe(true);
  });

  it('stops fetching when the loop breaks', async () => {
    const { client: observed, sent } = pagesClient();

    let seen = 0;
    for await (const _event of observed.auditEvents.listAll({ limit: LIMIT })) {
      seen += 1;
      if (seen === LIMIT + 1) {
        break;
      }
    }

    expect(sent).toHaveLength(2);
  });

  it('a page iterates onwards from itself', async () => {
    const { client: observed } = pagesClient();
    const second = await (await observed.auditEvents.list({ limit: LIMIT })).nextPage();
    if (second === null) {
      throw new Error('the first page has no next page');
    }

    const events = await collect(second);

    expect(ids(events)).toEqual(ids(seeded.slice(LIMIT)));
  });
});

describe('auditEvents.retrieve', () => {
  it('returns the event, as the list shows it', async () => {
    const event = await client.auditEvents.retrieve(at(3).id);

    expect(event).toEqual(at(3));
  });

  it('throws a NotFoundError for an ID that names no event', async () => {
    const error = await failure(client.auditEvents.retrieve('auditevt_0000000000000000000000000000xx'));

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, type: 'not_found_error' });
    expect(error.message).toMatch(/audit_event_id/);
    expect(error.requestId).toMatch(/^req_/);
  });

  it("throws a NotFoundError for another organization's event", async () => {
    const other = await server.createOrganization('not mine');
    const theirs = createAdminClient({ baseUrl: server.baseUrl, apiKey: other.adminKey });
    const [theirEvent] = (await theirs.auditEvents.list({ limit: 1 })).data;

    const error = await failure(client.auditEvents.retrieve(theirEvent?.id ?? ''));

    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('encodes the ID in the path, and refuses one that URL parsing would resolve away, sending nothing', async () => {
    const { client: observed, sent } = clientWithLog();

    await expect(observed.auditEvents.retrieve('a/b?c')).rejects.toBeInstanceOf(NotFoundError);
    for (const id of ['', '.', '..']) {
      await expect(observed.auditEvents.retrieve(id)).rejects.toThrow(TypeError);
    }

    expect(sent.map((request) => request.url.pathname)).toEqual(['/v1/organizations/audit_events/a%2Fb%3Fc']);
  });
});

describe('retries', () => {
  let scripted: ScriptedServer | undefined;
  afterEach(async () => {
    await scripted?.close();
    scripted = undefined;
  });

  it.each([
    { method: 'list', call: (api: AdminClient) => api.auditEvents.list() },
    { method: 'retrieve', call: (api: AdminClient) => api.auditEvents.retrieve('auditevt_x') },
  ])('$method is a read: retried after a 503, as apiKeys.list is', async ({ call }) => {
    const body = { data: [], has_more: false, first_id: null, last_id: null };
    scripted = await startScriptedServer([
      { status: 503, body: errorBody('service_unavailable_error', 'unavailable') },
      { status: 200, body },
    ]);
    const api = createAdminClient({ baseUrl: scripted.baseUrl, apiKey: 'sk-adm-test', retryBaseDelayMs: 1 });

    await expect(call(api)).resolves.toBeDefined();

    expect(scripted.requests).toHaveLength(2);
  });
});

describe('a 2023-06-01 client', () => {
  const old = () => {
    const { fetch, sent } = observedFetch();
    const oldClient = createAdminClient({
      baseUrl: server.baseUrl,
      apiKey: organization.adminKey,
      apiVersion: API_VERSION,
      fetch,
    });
    // A caller without types (plain JavaScript) reaches the methods all the same.
    return { untyped: (oldClient as unknown as AdminClient).auditEvents, sent, oldClient };
  };

  it('has no auditEvents in its type', () => {
    const { oldClient } = old();

    expectTypeOf<AdminClient<typeof API_VERSION>>().not.toHaveProperty('auditEvents');
    expectTypeOf<AdminClient>().toHaveProperty('auditEvents');
    const calls = () => {
      // @ts-expect-error listAuditEvents does not exist in 2023-06-01
      void oldClient.auditEvents.list();
    };
    expect(calls).toBeTypeOf('function');
  });

  it.each([
    { method: 'list', operationId: 'listAuditEvents' },
    { method: 'listAll', operationId: 'listAuditEvents' },
    { method: 'retrieve', operationId: 'getAuditEvent' },
  ] as const)(
    'refuses $method with an UnsupportedOperationError naming the version that introduced $operationId, sending nothing',
    async ({ method, operationId }) => {
      const { untyped, sent } = old();
      const pending =
        method === 'list'
          ? untyped.list()
          : method === 'retrieve'
            ? untyped.retrieve(at(0).id)
            : collect(untyped.listAll());

      const error = await failure(pending);

      expect(error).toBeInstanceOf(UnsupportedOperationError);
      expect(error).toMatchObject({
        type: 'unsupported_operation_error',
        status: undefined,
        operationId,
        introducedIn: LATEST_API_VERSION,
        apiVersion: API_VERSION,
      });
      expect(error.message).toBe(
        `auditEvents.${method === 'listAll' ? 'list' : method} (${operationId}) is available from API version ` +
          `${LATEST_API_VERSION}; this client uses API version ${API_VERSION}`,
      );
      expect(sent).toHaveLength(0);
    },
  );
});

describe('types', () => {
  it('auditEvents.list returns data typed as the generated AuditEvent', async () => {
    const page = await client.auditEvents.list({ limit: 1 });

    expectTypeOf(page).toEqualTypeOf<AuditEventPage>();
    expectTypeOf(page.data).toEqualTypeOf<GeneratedAuditEvent[]>();
    expectTypeOf<AuditEvent>().toEqualTypeOf<GeneratedAuditEvent>();
    expectTypeOf(client.auditEvents.retrieve).returns.resolves.toEqualTypeOf<GeneratedAuditEvent>();
    expectTypeOf(client.auditEvents.listAll).returns.toEqualTypeOf<
      AsyncGenerator<GeneratedAuditEvent, void, undefined>
    >();
  });

  it('the query takes the spec filters, and type as one type or a list of the spec types', () => {
    type Type = v2026_10_21.components['schemas']['AuditEventType'];
    expectTypeOf<ListAuditEventsQuery['type']>().toEqualTypeOf<Type | Type[] | undefined>();
    expectTypeOf<ListAuditEventsQuery>().toHaveProperty('target_id');
    expectTypeOf<ListAuditEventsQuery>().toHaveProperty('occurred_before');
    const calls = () => {
      // @ts-expect-error not a type of the spec
      void client.auditEvents.list({ type: 'api_key.deleted' });
      // @ts-expect-error not a filter of the spec
      void client.auditEvents.list({ status: 'active' });
    };
    expect(calls).toBeTypeOf('function');
  });
});
