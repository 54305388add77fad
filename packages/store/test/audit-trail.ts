import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { AUDIT_EVENTS_IMMUTABLE } from '../src/migrations/0005-audit-events.js';
import { hashSecret } from '../src/secrets.js';
import { seedApiKeys, seedAuditEvents } from '../src/seeding/index.js';
import { nowMicros } from '../src/time.js';
import type {
  ApiKeyPatch,
  ApiKeyRecord,
  AuditChanges,
  AuditEventFilters,
  AuditEventRecord,
  AuditEventType,
  ChangeContext,
  EpochMicros,
  ListAuditEventsQuery,
  ListAuditEventsResult,
  NewApiKey,
  PageCursor,
  Store,
} from '../src/types.js';
import type { StoreUnderTest } from './conformance.js';

/** The message of every error a test trigger (`AuditTrailSubject.refuse`) raises. */
export const REFUSED_BY_TEST = 'refused by the test trigger';

/** A statement a test trigger refuses. */
export type RefusedChange =
  | { table: 'audit_events'; timing: 'after insert' }
  | { table: 'api_keys' | 'admin_keys'; timing: 'before update'; id?: string | undefined };

/**
 * A store under test for the audit trail suite, with a way into its database besides the store: a connection of its
 * own to the same database, which sees only what the store has committed.
 */
export interface AuditTrailSubject extends StoreUnderTest {
  /** Runs one statement (no parameters) on the side connection and resolves with its rows; rejects as it fails. */
  sideQuery(statement: string): Promise<Record<string, unknown>[]>;
  /**
   * Installs a trigger that fails the statements of `change` with REFUSED_BY_TEST (only for the row of `id`, when
   * given), and resolves with the function that drops it.
   */
  refuse(change: RefusedChange): Promise<() => Promise<void>>;
}

const AUDIT_EVENT_ID = /^auditevt_[0-9a-f]{14}[A-Za-z0-9]{16}$/;
const ALICE = { type: 'user', id: 'user_alice' } as const;
const ROTATOR = { type: 'service_account', id: 'svcacct_rotator' } as const;
const HOUR_MICROS = 3_600_000_000;
const UNKNOWN_EVENT_ID = 'auditevt_00000000000000AAAAAAAAAAAAAAAA';
/** What the events of changes made through the API (`API_CONTEXT`) say about who made them. */
const API_RECORDED: Pick<AuditEventRecord, 'actor' | 'requestId' | 'client'> = {
  actor: { type: 'admin_key', id: 'adminkey_api0000000000000000000' },
  requestId: 'req_0123456789abcdef',
  client: { ipAddress: '203.0.113.7', userAgent: 'curl/8.5.0' },
};
/** The context of a change made through the API, with every field set. */
const API_CONTEXT: ChangeContext = { ...API_RECORDED };
/** What an event of a change made without a context says about it. */
const NO_CONTEXT = { actor: { type: 'operator', name: null }, requestId: null, client: null } as const;
/** The seeded trail of the listing tests: events about these many keys, made by these many admin keys. */
const SEEDED_EVENTS = { count: 300, targets: 6, actors: 3 } as const;
const PAGE_SIZES = [7, 40] as const;
/** Calls per turn of `issueOverTurns`: more than a PostgreSQL connection takes before another opens. */
const CALLS_PER_TURN = 10;

/** The listing order: IDs descending (byte order, which JavaScript's comparison of ASCII strings is). */
function newestFirst(a: AuditEventRecord, b: AuditEventRecord): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function ids(events: readonly AuditEventRecord[]): string[] {
  return events.map((event) => event.id);
}

/** The filters as the contract defines them, evaluated in memory: every given filter holds, bounds exclusive. */
function matches(event: AuditEventRecord, filters: AuditEventFilters): boolean {
  return (
    (filters.targetId === undefined || event.target.id === filters.targetId) &&
    (filters.actorId === undefined || (event.actor.type === 'admin_key' && event.actor.id === filters.actorId)) &&
    (filters.types === undefined || filters.types.includes(event.type)) &&
    (filters.occurredAfter === undefined || event.occurredAt > filters.occurredAfter) &&
    (filters.occurredBefore === undefined || event.occurredAt < filters.occurredBefore)
  );
}

/** The time part of an event's ID: its `occurredAt` as 14 hexadecimal digits. */
function timePartOf(occurredAt: EpochMicros): string {
  return occurredAt.toString(16).padStart(14, '0');
}

function at<T>(items: readonly T[], index: number): T {
  const item = items.at(index);
  if (item === undefined) {
    throw new Error(`no item at index ${index} of ${items.length}`);
  }
  return item;
}

/** Lists a page that must exist (the cursor, if any, names an event of the organization). */
async function eventPage(
  store: Store,
  query: ListAuditEventsQuery,
): Promise<Extract<ListAuditEventsResult, { kind: 'page' }>> {
  const result = await store.listAuditEvents(query);
  if (result.kind !== 'page') {
    throw new Error(`listAuditEvents found no page (${result.kind}) for ${JSON.stringify(query)}`);
  }
  return result;
}

/** Every event of the organization matching the filters, in one page larger than any test's trail. */
async function allEvents(store: Store, organizationId: string, filters?: AuditEventFilters) {
  const page = await eventPage(store, { organizationId, limit: 100_000, filters });
  expect(page.hasMore).toBe(false);
  return page.events;
}

/**
 * Walks the trail in both directions, page by page, and checks that each walk sees exactly `expected` in order,
 * every page but the last full and saying hasMore, the last saying it is the last.
 */
async function expectWalksInBothDirections(
  store: Store,
  organizationId: string,
  limit: number,
  filters: AuditEventFilters,
  expected: readonly AuditEventRecord[],
): Promise<void> {
  const forwards: string[] = [];
  let cursor: PageCursor | undefined;
  for (;;) {
    const page = await eventPage(store, { organizationId, limit, cursor, filters });
    forwards.push(...ids(page.events));
    if (!page.hasMore) {
      break;
    }
    expect(page.events).toHaveLength(limit);
    if (forwards.length > expected.length) {
      throw new Error(`walked past the ${expected.length} expected events`);
    }
    cursor = { direction: 'after', id: at(page.events, -1).id };
  }
  expect(forwards).toEqual(ids(expected));
  if (expected.length === 0) {
    return;
  }

  const pages: string[][] = [[at(expected, -1).id]];
  let seen = 1;
  cursor = { direction: 'before', id: at(expected, -1).id };
  for (;;) {
    const page = await eventPage(store, { organizationId, limit, cursor, filters });
    pages.unshift(ids(page.events));
    seen += page.events.length;
    if (!page.hasMore) {
      break;
    }
    expect(page.events).toHaveLength(limit);
    if (seen > expected.length) {
      throw new Error(`walked past the ${expected.length} expected events`);
    }
    cursor = { direction: 'before', id: at(page.events, 0).id };
  }
  expect(pages.flat()).toEqual(ids(expected));
}

/**
 * Issues `count` calls together, `CALLS_PER_TURN` in each turn of the event loop, and waits for all of them. One turn's
 * statements share a connection on PostgreSQL, and the next turn's go to another when that one is busy, so the calls
 * run on several connections at once, as the requests of many clients do.
 */
async function issueOverTurns<T>(count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const calls: Promise<T>[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % CALLS_PER_TURN === 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const issued = call(i);
    // Handled by Promise.all below; a rejection while later turns are issued is not an unhandled one.
    issued.catch(() => {});
    calls.push(issued);
  }
  return Promise.all(calls);
}

/**
 * Registers the audit trail suite for one dialect: what each change records, atomicity with the change, ordering
 * under concurrency, immutability, tenant isolation and listing. Each test makes its own organizations; the tests
 * that install triggers drop them before they end.
 */
export function describeAuditTrail(
  name: string,
  factory: () => Promise<AuditTrailSubject>,
  options: {
    /** Whether the engine has TRUNCATE, which the trail must refuse too. */
    truncate: boolean;
  },
): void {
  describe(`Audit trail: ${name}`, () => {
    let subject: AuditTrailSubject;
    let store: Store;
    let organizationCount = 0;

    const newOrganization = async (label = 'audit') => {
      organizationCount += 1;
      return (await store.createOrganization(`${label} organization ${organizationCount}`)).id;
    };
    const newKey = async (organizationId: string, overrides: Partial<NewApiKey> = {}, context?: ChangeContext) =>
      (await store.createApiKey({ organizationId, name: 'a key', createdBy: ALICE, ...overrides }, context)).apiKey;
    /** The events of the organization that `work` recorded, newest first. */
    const eventsDuring = async (organizationId: string, work: () => Promise<unknown>) => {
      const before = new Set(ids(await allEvents(store, organizationId)));
      await work();
      return (await allEvents(store, organizationId)).filter((event) => !before.has(event.id));
    };
    /** The number of events of every organization, read through the side connection. */
    const eventCount = async () =>
      Number((await subject.sideQuery('select count(*) as events from audit_events'))[0]?.events);
    /** Runs `work` with a test trigger in place, and drops the trigger whatever happens. */
    const whileRefusing = async <T>(change: RefusedChange, work: () => Promise<T>): Promise<T> => {
      const drop = await subject.refuse(change);
      try {
        return await work();
      } finally {
        await drop();
      }
    };

    beforeAll(async () => {
      subject = await factory();
      store = subject.store;
      await subject.migrator.migrateToLatest();
    });

    afterAll(async () => {
      await subject?.store.close();
      await subject?.cleanup?.();
    });

    describe('what each change records', () => {
      it('createOrganization records organization.created: the organization, its name from null', async () => {
        const before = nowMicros();
        const organization = await store.createOrganization('Acme');
        const after = nowMicros();

        const events = await allEvents(store, organization.id);

        expect(events).toEqual([
          {
            id: expect.stringMatching(AUDIT_EVENT_ID),
            type: 'organization.created',
            occurredAt: expect.any(Number),
            ...NO_CONTEXT,
            target: { type: 'organization', id: organization.id },
            changes: { name: { from: null, to: 'Acme' } },
            related: null,
            keyCount: null,
          },
        ]);
        const [event] = events;
        expect(event?.occurredAt).toBeGreaterThanOrEqual(before);
        expect(event?.occurredAt).toBeLessThanOrEqual(after);
        expect(event?.id.slice('auditevt_'.length, -16)).toBe(timePartOf(event?.occurredAt ?? 0));
        expect(await store.getAuditEvent(organization.id, event?.id ?? '')).toEqual(event);
      });

      it('createAdminKey records admin_key.created: the admin key, its name and status from null', async () => {
        const organizationId = await newOrganization();

        let created: Awaited<ReturnType<Store['createAdminKey']>> | undefined;
        const events = await eventsDuring(organizationId, async () => {
          created = await store.createAdminKey({ organizationId, name: 'ops' });
        });

        expect(events).toEqual([
          {
            id: expect.stringMatching(AUDIT_EVENT_ID),
            type: 'admin_key.created',
            occurredAt: expect.any(Number),
            ...NO_CONTEXT,
            target: { type: 'admin_key', id: created?.adminKey.id },
            changes: { name: { from: null, to: 'ops' }, status: { from: null, to: 'active' } },
            related: null,
            keyCount: null,
          },
        ]);
      });

      it('setAdminKeyStatus records admin_key.disabled and admin_key.enabled, nothing for the same status', async () => {
        const organizationId = await newOrganization();
        const { adminKey } = await store.createAdminKey({ organizationId, name: 'ops' });

        const events = await eventsDuring(organizationId, async () => {
          await store.setAdminKeyStatus(adminKey.id, 'active');
          await store.setAdminKeyStatus(adminKey.id, 'disabled');
          await store.setAdminKeyStatus(adminKey.id, 'disabled');
          await store.setAdminKeyStatus(adminKey.id, 'active');
          await store.setAdminKeyStatus(adminKey.id, 'active');
        });

        const common = {
          id: expect.stringMatching(AUDIT_EVENT_ID),
          occurredAt: expect.any(Number),
          ...NO_CONTEXT,
          target: { type: 'admin_key', id: adminKey.id },
          related: null,
          keyCount: null,
        };
        expect(events).toEqual([
          { ...common, type: 'admin_key.enabled', changes: { status: { from: 'disabled', to: 'active' } } },
          { ...common, type: 'admin_key.disabled', changes: { status: { from: 'active', to: 'disabled' } } },
        ]);
      });

      it('setAdminKeyStatus of an unknown admin key records nothing', async () => {
        const before = await eventCount();

        expect(await store.setAdminKeyStatus('adminkey_doesnotexist', 'disabled')).toBeUndefined();

        expect(await eventCount()).toBe(before);
      });

      it.each<[string, Partial<NewApiKey>, AuditChanges]>([
        ['no expiry', {}, { name: { from: null, to: 'a key' }, status: { from: null, to: 'active' } }],
        [
          'an expiry and a status',
          { status: 'inactive', expiresAt: 1_900_000_000_000_000 },
          {
            name: { from: null, to: 'a key' },
            status: { from: null, to: 'inactive' },
            expiresAt: { from: null, to: 1_900_000_000_000_000 },
          },
        ],
      ])('createApiKey of a key with %s records api_key.created, each field from null', async (_, input, changes) => {
        const organizationId = await newOrganization();

        let key: ApiKeyRecord | undefined;
        const events = await eventsDuring(organizationId, async () => {
          key = await newKey(organizationId, input);
        });

        expect(events).toEqual([
          {
            id: expect.stringMatching(AUDIT_EVENT_ID),
            type: 'api_key.created',
            occurredAt: expect.any(Number),
            ...NO_CONTEXT,
            target: { type: 'api_key', id: key?.id },
            changes,
            related: null,
            keyCount: null,
          },
        ]);
        // Recorded once the key exists (on PostgreSQL by the database's clock, the same machine's here).
        expect(events[0]?.occurredAt).toBeGreaterThanOrEqual(key?.createdAt ?? Number.POSITIVE_INFINITY);
      });

      const T1 = 1_900_000_000_000_000;
      const T2 = 1_950_000_000_000_000;
      it.each<[string, Partial<NewApiKey>, ApiKeyPatch, AuditChanges | undefined]>([
        ['a new name', {}, { name: 'renamed' }, { name: { from: 'a key', to: 'renamed' } }],
        ['a new status', {}, { status: 'archived' }, { status: { from: 'active', to: 'archived' } }],
        ['a first expiry', {}, { expiresAt: T1 }, { expiresAt: { from: null, to: T1 } }],
        ['another expiry', { expiresAt: T1 }, { expiresAt: T2 }, { expiresAt: { from: T1, to: T2 } }],
        ['no expiry any more', { expiresAt: T1 }, { expiresAt: null }, { expiresAt: { from: T1, to: null } }],
        [
          'the same name and a new status',
          {},
          { name: 'a key', status: 'inactive' },
          { status: { from: 'active', to: 'inactive' } },
        ],
        [
          'every field changed',
          { expiresAt: T1 },
          { name: 'renamed', status: 'inactive', expiresAt: T2 },
          {
            name: { from: 'a key', to: 'renamed' },
            status: { from: 'active', to: 'inactive' },
            expiresAt: { from: T1, to: T2 },
          },
        ],
        ['the same name', {}, { name: 'a key' }, undefined],
        ['no expiry again', {}, { expiresAt: null }, undefined],
        [
          'every field as it is',
          { status: 'inactive', expiresAt: T1 },
          { name: 'a key', status: 'inactive', expiresAt: T1 },
          undefined,
        ],
      ])('updateApiKey with %s records what changed, or nothing', async (_, input, patch, changes) => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId, input);

        let updated: ApiKeyRecord | undefined;
        const events = await eventsDuring(organizationId, async () => {
          updated = await store.updateApiKey(organizationId, key.id, patch);
        });

        expect(updated).toMatchObject(patch);
        expect(events).toEqual(
          changes === undefined
            ? []
            : [
                {
                  id: expect.stringMatching(AUDIT_EVENT_ID),
                  type: 'api_key.updated',
                  occurredAt: expect.any(Number),
                  ...NO_CONTEXT,
                  target: { type: 'api_key', id: key.id },
                  changes,
                  related: null,
                  keyCount: null,
                },
              ],
        );
      });

      it("updateApiKey of an unknown key, or of another organization's, records nothing anywhere", async () => {
        const organizationId = await newOrganization();
        const otherKey = await newKey(await newOrganization());
        const before = await eventCount();

        expect(await store.updateApiKey(organizationId, 'apikey_000000000000000000000000', { name: 'x' })).toBe(
          undefined,
        );
        expect(await store.updateApiKey(organizationId, otherKey.id, { name: 'stolen', status: 'archived' })).toBe(
          undefined,
        );
        await expect(store.updateApiKey(organizationId, otherKey.id, {} as ApiKeyPatch)).rejects.toThrow(TypeError);

        expect(await eventCount()).toBe(before);
      });

      it('rotateApiKey records api_key.created and api_key.rotated, each naming the other key', async () => {
        const organizationId = await newOrganization();
        const old = await newKey(organizationId, { name: 'rotate me' });

        let rotation: Awaited<ReturnType<Store['rotateApiKey']>> | undefined;
        const events = await eventsDuring(organizationId, async () => {
          rotation = await store.rotateApiKey({
            organizationId,
            id: old.id,
            gracePeriodMicros: HOUR_MICROS,
            createdBy: ROTATOR,
          });
        });

        const created = rotation?.kind === 'rotated' ? rotation.created.apiKey : undefined;
        const common = { id: expect.stringMatching(AUDIT_EVENT_ID), ...NO_CONTEXT, keyCount: null };
        expect([...events].sort((a, b) => a.type.localeCompare(b.type))).toEqual([
          {
            ...common,
            type: 'api_key.created',
            occurredAt: expect.any(Number),
            target: { type: 'api_key', id: created?.id },
            related: { type: 'api_key', id: old.id },
            changes: { name: { from: null, to: 'rotate me' }, status: { from: null, to: 'active' } },
          },
          {
            ...common,
            type: 'api_key.rotated',
            occurredAt: expect.any(Number),
            target: { type: 'api_key', id: old.id },
            related: { type: 'api_key', id: created?.id },
            changes: { expiresAt: { from: null, to: (rotation as { rotatedAt: number }).rotatedAt + HOUR_MICROS } },
          },
        ]);
        const [createdEvent, rotatedEvent] = [...events].sort((a, b) => a.type.localeCompare(b.type));
        // The new key's creation, then the old key's change, in the order the rotation made them.
        expect(createdEvent?.occurredAt).toBeGreaterThanOrEqual(created?.createdAt ?? Number.POSITIVE_INFINITY);
        expect(rotatedEvent?.occurredAt).toBeGreaterThanOrEqual(createdEvent?.occurredAt ?? Number.POSITIVE_INFINITY);
      });

      it('rotateApiKey of a key expiring before the grace period would end records no change in it', async () => {
        const organizationId = await newOrganization();
        const now = nowMicros();
        const expiresAt = now + 60_000_000;
        const old = await newKey(organizationId, { expiresAt });

        const events = await eventsDuring(organizationId, () =>
          store.rotateApiKey({ organizationId, id: old.id, gracePeriodMicros: HOUR_MICROS, createdBy: ROTATOR }),
        );

        const byType = Object.fromEntries(events.map((event) => [event.type, event]));
        expect(Object.keys(byType).sort()).toEqual(['api_key.created', 'api_key.rotated']);
        expect(byType['api_key.created']?.changes.expiresAt).toEqual({ from: null, to: expiresAt });
        expect(byType['api_key.rotated']?.changes).toEqual({});
      });

      it('rotateApiKey of an unknown, archived or expired key records nothing', async () => {
        const organizationId = await newOrganization();
        const archived = await newKey(organizationId, { status: 'archived' });
        const expired = await newKey(organizationId, { expiresAt: nowMicros() - 1 });

        const events = await eventsDuring(organizationId, async () => {
          for (const id of ['apikey_000000000000000000000000', archived.id, expired.id]) {
            const result = await store.rotateApiKey({ organizationId, id, gracePeriodMicros: 0, createdBy: ROTATOR });
            expect(result.kind).not.toBe('rotated');
          }
        });

        expect(events).toEqual([]);
      });

      it('seedApiKeys records one api_key.seeded event about the organization, with the number of keys', async () => {
        const organizationId = await newOrganization();

        const events = await eventsDuring(organizationId, () =>
          seedApiKeys(store, { organizationId, count: 25, workspaces: 2, users: 2, seed: 5 }, API_CONTEXT),
        );

        expect(events).toEqual([
          {
            id: expect.stringMatching(AUDIT_EVENT_ID),
            type: 'api_key.seeded',
            occurredAt: expect.any(Number),
            ...API_RECORDED,
            target: { type: 'organization', id: organizationId },
            changes: {},
            related: null,
            keyCount: 25,
          },
        ]);
      });

      it('the events of changes in a transaction commit with it, and roll back with it', async () => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId);

        const committed = await eventsDuring(organizationId, () =>
          store.transaction(async (inner) => {
            await inner.updateApiKey(organizationId, key.id, { name: 'committed' });
            await inner.createApiKey({ organizationId, name: 'committed too', createdBy: ALICE });
          }),
        );
        const rolledBack = await eventsDuring(organizationId, async () => {
          await expect(
            store.transaction(async (inner) => {
              await inner.updateApiKey(organizationId, key.id, { name: 'rolled back' });
              await inner.createApiKey({ organizationId, name: 'rolled back too', createdBy: ALICE });
              await inner.createAdminKey({ organizationId, name: 'rolled back as well' });
              throw new Error('abandon');
            }),
          ).rejects.toThrow('abandon');
        });

        expect(committed.map((event) => event.type).sort()).toEqual(['api_key.created', 'api_key.updated']);
        expect(rolledBack).toEqual([]);
        expect((await store.getApiKey(organizationId, key.id))?.name).toBe('committed');
      });
    });

    describe('who made each change', () => {
      /** Each kind of change, made in the context given; resolves with the events it recorded. */
      const CHANGES: [string, (context?: ChangeContext) => Promise<AuditEventRecord[]>, number][] = [
        [
          'createOrganization',
          async (context) => allEvents(store, (await store.createOrganization('made in context', context)).id),
          1,
        ],
        [
          'createAdminKey',
          async (context) => {
            const organizationId = await newOrganization();
            return eventsDuring(organizationId, () => store.createAdminKey({ organizationId, name: 'ops' }, context));
          },
          1,
        ],
        [
          'setAdminKeyStatus',
          async (context) => {
            const organizationId = await newOrganization();
            const { adminKey } = await store.createAdminKey({ organizationId, name: 'ops' });
            return eventsDuring(organizationId, () => store.setAdminKeyStatus(adminKey.id, 'disabled', context));
          },
          1,
        ],
        [
          'createApiKey',
          async (context) => {
            const organizationId = await newOrganization();
            return eventsDuring(organizationId, () => newKey(organizationId, {}, context));
          },
          1,
        ],
        [
          'updateApiKey',
          async (context) => {
            const organizationId = await newOrganization();
            const key = await newKey(organizationId);
            return eventsDuring(organizationId, () =>
              store.updateApiKey(organizationId, key.id, { name: 'renamed' }, context),
            );
          },
          1,
        ],
        [
          'rotateApiKey',
          async (context) => {
            const organizationId = await newOrganization();
            const key = await newKey(organizationId);
            return eventsDuring(organizationId, () =>
              store.rotateApiKey({ organizationId, id: key.id, gracePeriodMicros: 0, createdBy: ROTATOR }, context),
            );
          },
          2,
        ],
        [
          'seedApiKeys',
          async (context) => {
            const organizationId = await newOrganization();
            return eventsDuring(organizationId, () =>
              seedApiKeys(store, { organizationId, count: 3, workspaces: 1, users: 1, seed: 1 }, context),
            );
          },
          1,
        ],
      ];
      const CONTEXTS: [string, ChangeContext | undefined, Pick<AuditEventRecord, 'actor' | 'requestId' | 'client'>][] =
        [
          ['an admin key through the API', API_CONTEXT, API_RECORDED],
          [
            'a named operator',
            { actor: { type: 'operator', name: 'alice' } },
            { ...NO_CONTEXT, actor: { type: 'operator', name: 'alice' } },
          ],
          [
            'a client known only by its user agent',
            { actor: API_CONTEXT.actor, requestId: null, client: { ipAddress: null, userAgent: 'probe/1' } },
            { actor: API_CONTEXT.actor, requestId: null, client: { ipAddress: null, userAgent: 'probe/1' } },
          ],
          ['no context (an unknown operator)', undefined, NO_CONTEXT],
        ];

      describe.each(CONTEXTS)('made by %s', (_, context, recorded) => {
        it.each(CHANGES)(
          '%s records its event(s) with that actor, request and client',
          async (_call, change, count) => {
            const events = await change(context);

            expect(events).toHaveLength(count);
            for (const event of events) {
              expect({ actor: event.actor, requestId: event.requestId, client: event.client }).toEqual(recorded);
            }
          },
        );
      });
    });

    describe('secrets', () => {
      it('no event holds a secret or the hash of one, as listed or as stored', async () => {
        const organizationId = await newOrganization();
        const admin = await store.createAdminKey({ organizationId, name: 'ops' }, API_CONTEXT);
        const created = await store.createApiKey({ organizationId, name: 'k', createdBy: ALICE }, API_CONTEXT);
        await store.updateApiKey(organizationId, created.apiKey.id, { name: 'k2', status: 'inactive' }, API_CONTEXT);
        const rotation = await store.rotateApiKey(
          { organizationId, id: created.apiKey.id, gracePeriodMicros: HOUR_MICROS, createdBy: ROTATOR },
          API_CONTEXT,
        );
        await store.setAdminKeyStatus(admin.adminKey.id, 'disabled', API_CONTEXT);
        await seedApiKeys(store, { organizationId, count: 5, workspaces: 1, users: 1, seed: 2 }, API_CONTEXT);
        const secrets = [admin.secret, created.secret, rotation.kind === 'rotated' ? rotation.created.secret : ''];

        const events = await allEvents(store, organizationId);
        const listed = JSON.stringify(events);
        const gotten = JSON.stringify(
          await Promise.all(events.map((event) => store.getAuditEvent(organizationId, event.id))),
        );
        const stored = JSON.stringify(
          await subject.sideQuery(`select * from audit_events where organization_id = '${organizationId}'`),
        );

        expect(events.map((event) => event.type).sort()).toEqual([
          'admin_key.created',
          'admin_key.disabled',
          'api_key.created',
          'api_key.created',
          'api_key.rotated',
          'api_key.seeded',
          'api_key.updated',
          'organization.created',
        ]);
        expect(stored).toContain(created.apiKey.id);
        for (const secret of secrets) {
          expect(secret).toMatch(/^sk-(adm|api)-/);
          for (const text of [listed, gotten, stored]) {
            expect(text).not.toContain(secret);
            expect(text).not.toContain(hashSecret(secret));
          }
        }
      });
    });

    describe('atomicity: no change without its event', () => {
      /** A change whose event the test trigger refuses, and what it must leave as it was. */
      const CHANGES: [string, () => Promise<{ change: () => Promise<unknown>; state: () => Promise<unknown> }>][] = [
        [
          'createOrganization',
          async () => ({
            change: () => store.createOrganization('never'),
            state: () => store.listOrganizations(),
          }),
        ],
        [
          'createAdminKey',
          async () => {
            const organizationId = await newOrganization();
            return {
              change: () => store.createAdminKey({ organizationId, name: 'never' }),
              state: () => subject.sideQuery(`select * from admin_keys where organization_id = '${organizationId}'`),
            };
          },
        ],
        [
          'setAdminKeyStatus',
          async () => {
            const organizationId = await newOrganization();
            const { adminKey, secret } = await store.createAdminKey({ organizationId, name: 'ops' });
            return {
              change: () => store.setAdminKeyStatus(adminKey.id, 'disabled', API_CONTEXT),
              state: () => store.findCredential(hashSecret(secret)),
            };
          },
        ],
        [
          'createApiKey',
          async () => {
            const organizationId = await newOrganization();
            await newKey(organizationId);
            return {
              change: () => newKey(organizationId, { name: 'never' }, API_CONTEXT),
              state: () => store.listApiKeys({ organizationId, limit: 100 }),
            };
          },
        ],
        [
          'updateApiKey',
          async () => {
            const organizationId = await newOrganization();
            const key = await newKey(organizationId, { expiresAt: 1_900_000_000_000_000 });
            return {
              change: () =>
                store.updateApiKey(organizationId, key.id, { name: 'never', status: 'archived', expiresAt: null }),
              state: () => store.getApiKey(organizationId, key.id),
            };
          },
        ],
        [
          'rotateApiKey',
          async () => {
            const organizationId = await newOrganization();
            const key = await newKey(organizationId);
            return {
              change: () =>
                store.rotateApiKey({ organizationId, id: key.id, gracePeriodMicros: 0, createdBy: ROTATOR }),
              state: () => store.listApiKeys({ organizationId, limit: 100 }),
            };
          },
        ],
      ];

      it.each(CHANGES)('%s fails when its event cannot be written, and changes nothing', async (_, prepare) => {
        const { change, state } = await prepare();
        const before = { state: await state(), events: await eventCount() };

        await whileRefusing({ table: 'audit_events', timing: 'after insert' }, async () => {
          await expect(change()).rejects.toThrow(REFUSED_BY_TEST);
        });

        expect({ state: await state(), events: await eventCount() }).toEqual(before);
        // The trigger is gone: the same change now succeeds, with its event.
        await change();
        expect(await eventCount()).toBeGreaterThan(before.events);
      });
    });

    describe('atomicity: no event without its change', () => {
      it('an update the database refuses records no event', async () => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId);
        const before = await eventCount();

        await whileRefusing({ table: 'api_keys', timing: 'before update' }, async () => {
          await expect(
            store.updateApiKey(organizationId, key.id, { name: 'never', status: 'archived' }, API_CONTEXT),
          ).rejects.toThrow(REFUSED_BY_TEST);
        });

        expect(await store.getApiKey(organizationId, key.id)).toEqual(key);
        expect(await eventCount()).toBe(before);
      });

      it('a rotation whose old key the database refuses to change records no event, and creates no key', async () => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId);
        const before = await eventCount();

        await whileRefusing({ table: 'api_keys', timing: 'before update' }, async () => {
          await expect(
            store.rotateApiKey({ organizationId, id: key.id, gracePeriodMicros: 0, createdBy: ROTATOR }),
          ).rejects.toThrow(REFUSED_BY_TEST);
        });

        expect((await allEvents(store, organizationId)).map((event) => event.type)).toEqual([
          'api_key.created',
          'organization.created',
        ]);
        expect(await store.listApiKeys({ organizationId, limit: 10 })).toEqual({
          kind: 'page',
          keys: [key],
          hasMore: false,
        });
        expect(await eventCount()).toBe(before);
      });

      it('a status change of an admin key the database refuses records no event', async () => {
        const organizationId = await newOrganization();
        const { adminKey } = await store.createAdminKey({ organizationId, name: 'ops' });
        const before = await eventCount();

        await whileRefusing({ table: 'admin_keys', timing: 'before update' }, async () => {
          await expect(store.setAdminKeyStatus(adminKey.id, 'disabled')).rejects.toThrow(REFUSED_BY_TEST);
        });

        expect(await eventCount()).toBe(before);
      });

      it('of updates issued together, the one the database refuses records nothing; the others do', async () => {
        const organizationId = await newOrganization();
        const [first, refused, third] = [
          await newKey(organizationId),
          await newKey(organizationId),
          await newKey(organizationId),
        ];

        const events = await eventsDuring(organizationId, () =>
          whileRefusing({ table: 'api_keys', timing: 'before update', id: refused.id }, async () => {
            const outcomes = await Promise.allSettled(
              [first, refused, third].map((key, i) =>
                store.updateApiKey(organizationId, key.id, { name: `together ${i}` }),
              ),
            );
            expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
          }),
        );

        expect(events.map((event) => [event.target.id, event.changes]).sort()).toEqual(
          [
            [first.id, { name: { from: 'a key', to: 'together 0' } }],
            [third.id, { name: { from: 'a key', to: 'together 2' } }],
          ].sort(),
        );
        expect((await store.getApiKey(organizationId, refused.id))?.name).toBe('a key');
      });
    });

    describe('concurrent updates of one key', () => {
      /** The name changes of the key's update events, in listing order reversed: oldest first. */
      const renamesOf = async (organizationId: string, id: string) =>
        (await allEvents(store, organizationId, { targetId: id, types: ['api_key.updated'] }))
          .reverse()
          .map((event) => event.changes.name);
      /** Issues 30 renames of a new key named `rename 0` to `rename 1` ... `rename 30` together. */
      const renamedTogether = async () => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId, { name: 'rename 0' });
        await issueOverTurns(30, (i) =>
          store.updateApiKey(organizationId, key.id, { name: `rename ${i + 1}` }, API_CONTEXT),
        );
        return {
          renames: await renamesOf(organizationId, key.id),
          finalName: (await store.getApiKey(organizationId, key.id))?.name,
        };
      };

      beforeAll(async () => {
        // Opens the connections the updates will spread over (PostgreSQL keeps them; SQLite has one).
        await issueOverTurns(4 * CALLS_PER_TURN, () => store.ping());
      });

      it('30 renames issued together each record the name as the one before left it', async () => {
        const { renames, finalName } = await renamedTogether();

        // Whatever order they ran in, each starts from where another ended: one chain from the first name to the last.
        const byFrom = new Map(renames.map((rename) => [rename?.from, rename?.to]));
        const chain = ['rename 0'];
        for (let next = byFrom.get('rename 0'); next !== undefined && next !== null; next = byFrom.get(next)) {
          chain.push(next);
          if (chain.length > renames.length + 1) {
            throw new Error('the renames form a cycle');
          }
        }
        expect(renames).toHaveLength(30);
        expect(byFrom.size).toBe(30);
        expect(chain).toHaveLength(31);
        expect(chain.at(-1)).toBe(finalName);
      });

      it('30 renames issued together are listed in the order they were made, each from the one before', async () => {
        const { renames, finalName } = await renamedTogether();

        expect(renames).toHaveLength(30);
        expect(renames.map((rename) => rename?.from)).toEqual([
          'rename 0',
          ...renames.slice(0, -1).map((rename) => rename?.to),
        ]);
        expect(renames.at(-1)?.to).toBe(finalName);
      });

      it('30 updates issued together, to one of three names: real changes only, listed as one chain', async () => {
        const organizationId = await newOrganization();
        const key = await newKey(organizationId, { name: 'name 0' });

        await issueOverTurns(30, (i) => store.updateApiKey(organizationId, key.id, { name: `name ${i % 3}` }));
        const renames = await renamesOf(organizationId, key.id);
        const finalName = (await store.getApiKey(organizationId, key.id))?.name;

        expect(renames.length).toBeGreaterThan(0);
        expect(renames.length).toBeLessThanOrEqual(30);
        expect(renames.filter((rename) => rename?.from === rename?.to)).toEqual([]);
        expect(renames.map((rename) => rename?.from)).toEqual([
          'name 0',
          ...renames.slice(0, -1).map((rename) => rename?.to),
        ]);
        expect(renames.at(-1)?.to).toBe(finalName);
      });
    });

    describe('immutability', () => {
      let organizationId: string;
      let event: AuditEventRecord;

      beforeAll(async () => {
        organizationId = await newOrganization();
        await newKey(organizationId);
        event = at(await allEvents(store, organizationId), 0);
      });

      it.each([
        ['an update of one event', (id: string) => `update audit_events set name_after = 'forged' where id = '${id}'`],
        ['an update of every event', () => `update audit_events set actor_name = 'forged'`],
        ['a delete of one event', (id: string) => `delete from audit_events where id = '${id}'`],
        ['a delete of every event', () => 'delete from audit_events'],
      ])('the database refuses %s', async (_, statement) => {
        const before = await eventCount();

        await expect(subject.sideQuery(statement(event.id))).rejects.toThrow(AUDIT_EVENTS_IMMUTABLE);

        expect(await store.getAuditEvent(organizationId, event.id)).toEqual(event);
        expect(await eventCount()).toBe(before);
      });

      // SQLite has no TRUNCATE (its truncate optimisation is a DELETE, which the trigger refuses, above).
      if (options.truncate) {
        it('the database refuses to truncate the trail', async () => {
          const before = await eventCount();

          await expect(subject.sideQuery('truncate audit_events')).rejects.toThrow(AUDIT_EVENTS_IMMUTABLE);

          expect(await eventCount()).toBe(before);
        });
      }

      it('the store has no call that changes or deletes an event', () => {
        type AuditEventCalls = Extract<keyof Store, `${string}AuditEvent${string}`>;
        expectTypeOf<AuditEventCalls>().toEqualTypeOf<'listAuditEvents' | 'getAuditEvent'>();

        expect(
          Object.keys(store)
            .filter((call) => /audit|event/i.test(call))
            .sort(),
        ).toEqual(['getAuditEvent', 'listAuditEvents']);
      });
    });

    describe('organization isolation', () => {
      let orgA: string;
      let orgB: string;
      let eventsA: AuditEventRecord[];
      let eventsB: AuditEventRecord[];
      let keyB: ApiKeyRecord;

      beforeAll(async () => {
        orgA = await newOrganization('A');
        orgB = await newOrganization('B');
        // The same changes by the same actor in both, so that only the organization tells them apart.
        for (const organizationId of [orgA, orgB]) {
          const key = await newKey(organizationId, { name: 'same' }, API_CONTEXT);
          await store.updateApiKey(organizationId, key.id, { name: 'same again' }, API_CONTEXT);
          keyB = key;
        }
        eventsA = await allEvents(store, orgA);
        eventsB = await allEvents(store, orgB);
      });

      it.each<[string, AuditEventFilters]>([
        ['no filter', {}],
        ['actorId', { actorId: 'adminkey_api0000000000000000000' }],
        ['types', { types: ['api_key.created', 'api_key.updated'] }],
        ['occurredAfter', { occurredAfter: 0 }],
      ])('listAuditEvents with %s lists only the organization’s own events', async (_, filters) => {
        const listedA = await allEvents(store, orgA, filters);
        const listedB = await allEvents(store, orgB, filters);

        expect(listedA.length).toBeGreaterThan(0);
        expect(ids(listedA)).toEqual(ids(eventsA.filter((event) => matches(event, filters))));
        expect(ids(listedB)).toEqual(ids(eventsB.filter((event) => matches(event, filters))));
      });

      it("a targetId of another organization's key lists nothing", async () => {
        expect(await allEvents(store, orgA, { targetId: keyB.id })).toEqual([]);
        expect(await allEvents(store, orgB, { targetId: keyB.id })).toHaveLength(2);
      });

      it("getAuditEvent of another organization's event returns undefined", async () => {
        for (const event of eventsB) {
          expect(await store.getAuditEvent(orgA, event.id)).toBeUndefined();
          expect(await store.getAuditEvent(orgB, event.id)).toEqual(event);
        }
      });

      it.each<PageCursor['direction']>(['after', 'before'])(
        "an '%s' cursor naming another organization's event finds no cursor",
        async (direction) => {
          for (const filters of [{}, { types: ['api_key.updated'] as AuditEventType[] }, { occurredAfter: 0 }]) {
            for (const event of eventsB) {
              expect(
                await store.listAuditEvents({
                  organizationId: orgA,
                  limit: 10,
                  cursor: { direction, id: event.id },
                  filters,
                }),
              ).toEqual({ kind: 'cursor_not_found' });
            }
          }
        },
      );
    });

    describe('listing', () => {
      let organizationId: string;
      let all: AuditEventRecord[];
      let realKey: ApiKeyRecord;
      let seeded: number;
      /** The filters of the model-based checks, made from the trail once it is in place. */
      let filterCases: [string, AuditEventFilters][];

      beforeAll(async () => {
        organizationId = await newOrganization();
        seeded = await seedAuditEvents(store, { organizationId, ...SEEDED_EVENTS, seed: 11 });
        // Real changes after the seeded ones, some by an admin key that also made seeded changes.
        const seededActor: ChangeContext = {
          actor: { type: 'admin_key', id: 'adminkey_seed1' },
          requestId: 'req_real',
        };
        realKey = await newKey(organizationId, { name: 'real' }, seededActor);
        for (let i = 0; i < 5; i++) {
          await store.updateApiKey(organizationId, realKey.id, { name: `real ${i}` }, seededActor);
        }
        await store.rotateApiKey({
          organizationId,
          id: realKey.id,
          gracePeriodMicros: HOUR_MICROS,
          createdBy: ROTATOR,
        });
        const { adminKey } = await store.createAdminKey({ organizationId, name: 'ops' }, seededActor);
        await store.setAdminKeyStatus(adminKey.id, 'disabled', API_CONTEXT);
        all = await allEvents(store, organizationId);

        const times = all.map((event) => event.occurredAt);
        const middle = at(times, Math.floor(times.length / 2));
        const quarter = at(times, Math.floor(times.length / 4));
        const threeQuarters = at(times, Math.floor((times.length * 3) / 4));
        filterCases = [
          ['no filter', {}],
          ['the targetId of a seeded key', { targetId: 'apikey_seed1' }],
          ['the targetId of a real key', { targetId: realKey.id }],
          ['an actorId of seeded and real events', { actorId: 'adminkey_seed1' }],
          ['one type', { types: ['api_key.updated'] }],
          ['two types', { types: ['api_key.created', 'api_key.rotated'] }],
          ['three types, one repeated', { types: ['admin_key.disabled', 'api_key.rotated', 'admin_key.disabled'] }],
          ['occurredAfter an event’s moment', { occurredAfter: middle }],
          ['occurredBefore an event’s moment', { occurredBefore: middle }],
          ['a time window', { occurredAfter: threeQuarters, occurredBefore: quarter }],
          ['a window of one microsecond', { occurredAfter: middle - 1, occurredBefore: middle + 1 }],
          ['an empty window', { occurredAfter: middle, occurredBefore: middle + 1 }],
          ['targetId + types', { targetId: 'apikey_seed2', types: ['api_key.updated', 'api_key.created'] }],
          [
            'actorId + types + occurredAfter',
            { actorId: 'adminkey_seed0', types: ['api_key.updated'], occurredAfter: middle },
          ],
          ['targetId + actorId', { targetId: 'apikey_seed3', actorId: 'adminkey_seed2' }],
          [
            'every filter',
            {
              targetId: 'apikey_seed4',
              actorId: 'adminkey_seed1',
              types: ['api_key.updated', 'api_key.rotated'],
              occurredAfter: threeQuarters,
              occurredBefore: quarter,
            },
          ],
          ['a type nobody has', { types: ['api_key.seeded'] }],
        ];
      });

      it('lists every event once, newest first, each ID naming the moment it occurred', () => {
        expect(all).toHaveLength(seeded + 1 + 1 + 5 + 2 + 2);
        expect(ids(all)).toEqual(ids([...all].sort(newestFirst)));
        expect(new Set(ids(all)).size).toBe(all.length);
        for (const [i, event] of all.entries()) {
          expect(event.id).toMatch(AUDIT_EVENT_ID);
          expect(event.id.slice('auditevt_'.length, -16)).toBe(timePartOf(event.occurredAt));
          if (i > 0) {
            expect(event.occurredAt).toBeLessThanOrEqual(at(all, i - 1).occurredAt);
          }
        }
      });

      it('seedAuditEvents inserts that many events, about the given numbers of targets by admin keys', () => {
        const seededEvents = all.filter((event) => event.requestId?.startsWith('req_seed'));
        const newest = at(seededEvents, 0).occurredAt;
        const oldest = at(seededEvents, -1).occurredAt;

        expect(seeded).toBe(SEEDED_EVENTS.count);
        expect(seededEvents).toHaveLength(SEEDED_EVENTS.count);
        expect(new Set(seededEvents.map((event) => event.actor.type === 'admin_key' && event.actor.id))).toEqual(
          new Set(['adminkey_seed0', 'adminkey_seed1', 'adminkey_seed2']),
        );
        const apiKeyTargets = seededEvents.filter((event) => event.target.type === 'api_key');
        expect(new Set(apiKeyTargets.map((event) => event.target.id))).toEqual(
          new Set(Array.from({ length: SEEDED_EVENTS.targets }, (_, i) => `apikey_seed${i}`)),
        );
        // One millisecond apart, give or take the sub-millisecond part.
        expect(newest - oldest).toBeGreaterThan((SEEDED_EVENTS.count - 2) * 1000);
        expect(newest - oldest).toBeLessThan(SEEDED_EVENTS.count * 1000);
        expect(newest).toBeLessThanOrEqual(realKey.createdAt);
      });

      it('getAuditEvent returns each event as listed, and undefined for an unknown ID', async () => {
        const gotten = await Promise.all(all.map((event) => store.getAuditEvent(organizationId, event.id)));

        expect(gotten).toEqual(all);
        expect(await store.getAuditEvent(organizationId, UNKNOWN_EVENT_ID)).toBeUndefined();
      });

      it('each filter, alone or combined, lists exactly the matching events in one large page', async () => {
        for (const [label, filters] of filterCases) {
          const expected = all.filter((event) => matches(event, filters));
          expect(ids(await allEvents(store, organizationId, filters)), label).toEqual(ids(expected));
        }
        // The cases must tell a filter that works from one that does not.
        const counts = filterCases.map(([, filters]) => all.filter((event) => matches(event, filters)).length);
        expect(counts.filter((count) => count > 0 && count < all.length).length).toBeGreaterThan(10);
      });

      it.each(PAGE_SIZES)('pages of %i, walked forwards and backwards, see each matching event once', async (limit) => {
        for (const [label, filters] of filterCases) {
          const expected = all.filter((event) => matches(event, filters));
          try {
            await expectWalksInBothDirections(store, organizationId, limit, filters, expected);
          } catch (error) {
            throw new Error(`walking with ${label}`, { cause: error });
          }
        }
      });

      it('any cursor, matching the filters or not, positions the page by its ID in both directions', async () => {
        const cursors = [
          at(all, 0),
          at(all, -1),
          at(all, Math.floor(all.length / 3)),
          at(all, Math.floor(all.length / 2)),
        ];
        for (const [label, filters] of filterCases) {
          const expected = all.filter((event) => matches(event, filters));
          for (const cursor of cursors) {
            const after = await eventPage(store, {
              organizationId,
              limit: 10,
              cursor: { direction: 'after', id: cursor.id },
              filters,
            });
            const before = await eventPage(store, {
              organizationId,
              limit: 10,
              cursor: { direction: 'before', id: cursor.id },
              filters,
            });

            const older = expected.filter((event) => event.id < cursor.id);
            const newer = expected.filter((event) => event.id > cursor.id);
            expect(ids(after.events), `${label}, after`).toEqual(ids(older.slice(0, 10)));
            expect(after.hasMore, `${label}, after`).toBe(older.length > 10);
            expect(ids(before.events), `${label}, before`).toEqual(ids(newer.slice(-10)));
            expect(before.hasMore, `${label}, before`).toBe(newer.length > 10);
          }
        }
      });

      it('the moment bounds are exclusive, to the microsecond', async () => {
        const event = at(all, Math.floor(all.length / 2));
        const sameMoment = all.filter((other) => other.occurredAt === event.occurredAt);
        const listed = (filters: AuditEventFilters) => allEvents(store, organizationId, filters).then(ids);

        expect(await listed({ occurredAfter: event.occurredAt - 1, occurredBefore: event.occurredAt + 1 })).toEqual(
          ids(sameMoment),
        );
        expect(await listed({ occurredAfter: event.occurredAt })).not.toContain(event.id);
        expect(await listed({ occurredAfter: event.occurredAt - 1 })).toContain(event.id);
        expect(await listed({ occurredBefore: event.occurredAt })).not.toContain(event.id);
        expect(await listed({ occurredBefore: event.occurredAt + 1 })).toContain(event.id);
      });

      it('a limit equal to the number of matching events says no more; one less says more', async () => {
        const filters: AuditEventFilters = { types: ['api_key.created', 'api_key.rotated'] };
        const expected = all.filter((event) => matches(event, filters));

        const exact = await eventPage(store, { organizationId, limit: expected.length, filters });
        const short = await eventPage(store, { organizationId, limit: expected.length - 1, filters });

        expect(ids(exact.events)).toEqual(ids(expected));
        expect(exact.hasMore).toBe(false);
        expect(ids(short.events)).toEqual(ids(expected.slice(0, -1)));
        expect(short.hasMore).toBe(true);
      });

      it('after the oldest event and before the newest are empty last pages', async () => {
        expect(
          await store.listAuditEvents({ organizationId, limit: 5, cursor: { direction: 'after', id: at(all, -1).id } }),
        ).toEqual({ kind: 'page', events: [], hasMore: false });
        expect(
          await store.listAuditEvents({ organizationId, limit: 5, cursor: { direction: 'before', id: at(all, 0).id } }),
        ).toEqual({ kind: 'page', events: [], hasMore: false });
      });

      it.each<PageCursor['direction']>(['after', 'before'])(
        "an '%s' cursor naming no event finds no cursor, with or without filters",
        async (direction) => {
          for (const filters of [{}, { targetId: realKey.id }, { types: ['api_key.updated'] as AuditEventType[] }]) {
            expect(
              await store.listAuditEvents({
                organizationId,
                limit: 5,
                cursor: { direction, id: UNKNOWN_EVENT_ID },
                filters,
              }),
            ).toEqual({ kind: 'cursor_not_found' });
          }
        },
      );

      it('an empty list of types is a TypeError', async () => {
        await expect(store.listAuditEvents({ organizationId, limit: 5, filters: { types: [] } })).rejects.toThrow(
          TypeError,
        );
      });
    });
  });
}
