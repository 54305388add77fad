/**
 * What the store holds, watched request by request: the fixture's keys field by field, the keys created since the
 * last look, and the audit events written since. The keys that requests change are restored afterwards, so that
 * every request meets the state the oracle assumes; created keys and events stay (nothing deletes them), and only
 * what is newer than the last look is read again.
 */
import { isDeepStrictEqual } from 'node:util';
import type { TestServer } from '@apikeys/server/testing';
import { type ApiKeyRecord, type AuditEventRecord, nowMicros } from '@apikeys/store';
import type { Fixture } from './fixture.js';
import type { Organization } from './placeholders.js';

/** A fixture key whose record is no longer what the run expects. */
export interface KeyChange {
  id: string;
  organization: Organization;
  expected: ApiKeyRecord;
  stored: ApiKeyRecord | undefined;
}

/** What changed in the store since the last look. */
export interface StoreChanges {
  keys: KeyChange[];
  /** Keys created since the last look, newest first. */
  created: Record<Organization, ApiKeyRecord[]>;
  /** Audit events written since the last look, newest first. */
  events: Record<Organization, AuditEventRecord[]>;
}

/** No new item can be this many: a look that finds as many reports them all the same, and the check fails. */
const LOOK_LIMIT = 20;

const ORGANIZATIONS: readonly Organization[] = ['own', 'other'];

/** Watches the store of a test server for the changes requests make. */
export class StoreWatch {
  /** What each fixture key should be: as created, but for `lastUsedAt`, which verifications move on. */
  readonly #expected = new Map<string, ApiKeyRecord>();
  readonly #newestKey = new Map<Organization, string>();
  readonly #newestEvent = new Map<Organization, string>();

  private constructor(
    private readonly server: TestServer,
    private readonly fixture: Fixture,
  ) {
    for (const [id, { record }] of fixture.keys) {
      this.#expected.set(id, record);
    }
  }

  /** Starts watching from the store's state now. */
  static async start(server: TestServer, fixture: Fixture): Promise<StoreWatch> {
    const watch = new StoreWatch(server, fixture);
    await watch.#lookFromHere();
    return watch;
  }

  /** The record a fixture key should have now. */
  expected(id: string): ApiKeyRecord | undefined {
    return this.#expected.get(id);
  }

  /** Writes the key uses the server noted, then reads what changed since the last look. */
  async changes(): Promise<StoreChanges> {
    await this.server.flushKeyUsage();
    const { store } = this.server;
    const keys: KeyChange[] = [];
    for (const [id, { organization }] of this.fixture.keys) {
      const stored = await store.getApiKey(this.fixture.organizations[organization], id);
      const expected = this.#expected.get(id);
      if (expected && !isDeepStrictEqual(stored, expected)) {
        keys.push({ id, organization, expected, stored });
      }
    }
    const created = { own: [] as ApiKeyRecord[], other: [] as ApiKeyRecord[] };
    const events = { own: [] as AuditEventRecord[], other: [] as AuditEventRecord[] };
    for (const organization of ORGANIZATIONS) {
      const organizationId = this.fixture.organizations[organization];
      const newestKey = this.#newestKey.get(organization) ?? '';
      const keyPage = await store.listApiKeys({
        organizationId,
        limit: LOOK_LIMIT,
        cursor: { direction: 'before', id: newestKey },
      });
      created[organization] = keyPage.kind === 'page' ? keyPage.keys : [];
      const newestEvent = this.#newestEvent.get(organization) ?? '';
      const eventPage = await store.listAuditEvents({
        organizationId,
        limit: LOOK_LIMIT,
        cursor: { direction: 'before', id: newestEvent },
      });
      events[organization] = eventPage.kind === 'page' ? eventPage.events : [];
    }
    return { keys, created, events };
  }

  /**
   * Takes what was seen as the new starting point: the fixture keys' names, statuses and expiries are restored (an
   * operator's update, with its audit event), the uses they record are kept, and the next look starts after the
   * newest key and event. Throws when a key cannot be restored: later results would be meaningless.
   */
  async settle(changes: StoreChanges): Promise<void> {
    const { store } = this.server;
    for (const { id, organization, expected, stored } of changes.keys) {
      if (stored === undefined) {
        throw new Error(`the fixture's key ${id} is gone: later results would be meaningless`);
      }
      const record = this.fixture.keys.get(id)?.record ?? expected;
      const { name, status, expiresAt = null, permissions = [], metadata = {} } = record;
      const organizationId = this.fixture.organizations[organization];
      if (
        stored.name !== name ||
        stored.status !== status ||
        (stored.expiresAt ?? null) !== expiresAt ||
        !isDeepStrictEqual(stored.permissions, permissions) ||
        !isDeepStrictEqual(stored.metadata, metadata)
      ) {
        // A key a rotation expired takes no other status nor expiry, but an archived one does (archived wins over
        // expired): it is archived first.
        if (stored.status !== 'archived' && stored.expiresAt != null && stored.expiresAt <= nowMicros()) {
          await store.updateApiKey(organizationId, id, { status: 'archived' });
        }
        await store.updateApiKey(organizationId, id, { name, status, expiresAt, permissions, metadata });
      }
      const restored = await store.getApiKey(organizationId, id);
      if (!restored || restored.name !== name || restored.status !== status) {
        throw new Error(`the fuzzer cannot restore the key ${id}: later results would be meaningless`);
      }
      this.#expected.set(id, restored);
    }
    const moved = ORGANIZATIONS.some((o) => changes.created[o].length > 0 || changes.events[o].length > 0);
    if (moved || changes.keys.length > 0) {
      await this.#lookFromHere();
    }
  }

  async #lookFromHere(): Promise<void> {
    const { store } = this.server;
    for (const organization of ORGANIZATIONS) {
      const organizationId = this.fixture.organizations[organization];
      const keys = await store.listApiKeys({ organizationId, limit: 1 });
      const events = await store.listAuditEvents({ organizationId, limit: 1 });
      const [newestKey] = keys.kind === 'page' ? keys.keys : [];
      const [newestEvent] = events.kind === 'page' ? events.events : [];
      if (!newestKey || !newestEvent) {
        throw new Error(`the fixture's organization ${organization} has no key or no audit event`);
      }
      this.#newestKey.set(organization, newestKey.id);
      this.#newestEvent.set(organization, newestEvent.id);
    }
  }
}
