import { CHANGE_FEED, LATEST_API_VERSION } from '@apikeys/api-types';
import {
  CHANGES_PATH,
  expectError,
  type FeedEvent,
  type FeedReader,
  parsePrometheusText,
  startTestServer,
  subscribeToChanges,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { hashSecret } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesFailingAddresses,
  refusesRegularKeys,
  refusesUnauthenticated,
  unusedVerifierKey,
} from './refusals.js';

const VERSION = LATEST_API_VERSION;
const OPERATION = { operationId: 'streamKeyChanges', version: VERSION } as const;

/** The error answer of a refused subscription, read whole. */
async function refusedAnswer(reader: FeedReader) {
  await reader.ended();
  const text = reader.text();
  return { response: reader.response, body: JSON.parse(text) as unknown, text };
}

const isChangeOf = (id: string) => (event: FeedEvent) => event.type === 'api_key_changed' && event.api_key_id === id;

// From 2026-10-21 on.
describe('streamKeyChanges', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let other: TestOrganizationWithClient;
  let verifierKey: string;
  const readers: FeedReader[] = [];
  const metrics = new Metrics();

  beforeAll(async () => {
    server = await startTestServer({ metrics });
    org = await server.createOrganization('feed tests');
    other = await server.createOrganization('another organization');
    ({ secret: verifierKey } = await server.store.createVerifierKey({ organizationId: org.id, name: 'gateway' }));
  });
  afterAll(() => server.close());
  afterEach(() => {
    for (const reader of readers.splice(0)) {
      reader.close();
    }
    vi.restoreAllMocks();
  });

  async function subscribe(credential = verifierKey, target = server) {
    const reader = await subscribeToChanges(target.baseUrl, credential);
    readers.push(reader);
    return reader;
  }

  async function newKey(organizationId = org.id, name = 'watched key') {
    return server.store.createApiKey({ organizationId, name, createdBy: { type: 'user', id: 'user_alice' } });
  }

  describe('200 the stream of the organization key changes [2026-10-21]', () => {
    it('says subscribed first, as Server-Sent Events that are never cached, with the heartbeat interval', async () => {
      const reader = await subscribe();

      const first = await reader.next(() => true);

      expect(reader.response.status).toBe(200);
      expect(reader.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(reader.response.headers.get('cache-control')).toBe('no-store');
      expect(reader.response.headers.get('request-id')).toMatch(/^req_/);
      expect(first).toEqual({
        type: 'subscribed',
        heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs,
        ends_in_ms: expect.toSatisfy((ms: number) => ms > 0.9 * 15 * 60_000 - 1 && ms <= 15 * 60_000),
      });
      expect(reader.text()).toMatch(/^event: subscribed\ndata: \{.*\}\n\n/);
    });

    it('names each key changed through the API and how: a rename, a deactivation, an expiry, a rotation', async () => {
      const { apiKey } = await newKey();
      const reader = await subscribe();
      await reader.next((event) => event.type === 'subscribed');
      const client = server.versionClient(VERSION, org.adminKey);
      const path = { api_key_id: apiKey.id };

      await client.POST('/v1/organizations/api_keys/{api_key_id}', { params: { path }, body: { name: 'renamed' } });
      await client.POST('/v1/organizations/api_keys/{api_key_id}', { params: { path }, body: { status: 'inactive' } });
      await client.POST('/v1/organizations/api_keys/{api_key_id}', {
        params: { path },
        body: { expires_at: '2099-01-01T00:00:00Z' },
      });
      await client.POST('/v1/organizations/api_keys/{api_key_id}/rotate', {
        params: { path: { api_key_id: apiKey.id } },
        body: { grace_period_seconds: 60 },
      });
      await reader.next((event) => event.type === 'api_key_changed' && event.change === 'rotated');

      expect(reader.events.filter(isChangeOf(apiKey.id))).toEqual([
        { type: 'api_key_changed', api_key_id: apiKey.id, change: 'updated' },
        { type: 'api_key_changed', api_key_id: apiKey.id, change: 'updated' },
        { type: 'api_key_changed', api_key_id: apiKey.id, change: 'updated' },
        { type: 'api_key_changed', api_key_id: apiKey.id, change: 'rotated' },
      ]);
    });

    it("hears an operator's change (the CLI writes through the store) and serves admin keys as well", async () => {
      const { apiKey } = await newKey();
      const reader = await subscribe(org.adminKey);
      await reader.next((event) => event.type === 'subscribed');

      await server.store.updateApiKey(org.id, apiKey.id, { status: 'archived' });

      expect(await reader.next(isChangeOf(apiKey.id))).toEqual({
        type: 'api_key_changed',
        api_key_id: apiKey.id,
        change: 'updated',
      });
    });

    it("never sends another organization's changes: their keys' IDs never reach this subscriber", async () => {
      const theirs = await Promise.all([newKey(other.id, 'theirs 1'), newKey(other.id, 'theirs 2')]);
      const ours = await newKey();
      const reader = await subscribe();
      const theirReader = await subscribe(other.adminKey);
      await Promise.all([reader, theirReader].map((r) => r.next((event) => event.type === 'subscribed')));

      for (const { apiKey } of theirs) {
        await server.store.updateApiKey(other.id, apiKey.id, { name: 'changed by them' });
        await server.store.rotateApiKey({
          organizationId: other.id,
          id: apiKey.id,
          gracePeriodMicros: 0,
          createdBy: { type: 'user', id: 'user_bob' },
        });
      }
      // Sent after theirs, in the same order: once it has arrived, any leak of theirs would have too.
      await server.store.updateApiKey(org.id, ours.apiKey.id, { name: 'ours' });
      await reader.next(isChangeOf(ours.apiKey.id));
      await theirReader.next(isChangeOf(theirs[1]?.apiKey.id ?? ''));

      for (const { apiKey } of theirs) {
        expect(reader.text()).not.toContain(apiKey.id);
      }
      expect(theirReader.text()).not.toContain(ours.apiKey.id);
      expect(reader.events.filter((event) => event.type === 'api_key_changed')).toEqual([
        { type: 'api_key_changed', api_key_id: ours.apiKey.id, change: 'updated' },
      ]);
    });

    it('never carries a secret or its hash, nor anything verification would not show', async () => {
      const { apiKey, secret } = await newKey();
      const reader = await subscribe();
      await reader.next((event) => event.type === 'subscribed');

      await server.store.updateApiKey(org.id, apiKey.id, { name: 'secretive' });
      await reader.next(isChangeOf(apiKey.id));

      expect(reader.text()).not.toContain(secret);
      expect(reader.text()).not.toContain(hashSecret(secret));
      expect(reader.text()).not.toContain(secret.slice(-8));
      expect(reader.text()).not.toContain('secretive');
    });

    it('sends a heartbeat every interval, so that a quiet feed can be told from a dead one', async () => {
      const reader = await subscribe();
      const subscribedAt = performance.now();
      await reader.next((event) => event.type === 'subscribed');

      await reader.next((event) => event.type === 'heartbeat', CHANGE_FEED.heartbeatIntervalMs + 1_000);
      const firstAt = performance.now();
      const count = reader.events.length;
      await reader.next((event) => event.type === 'heartbeat', CHANGE_FEED.heartbeatIntervalMs + 1_000, count);

      expect(firstAt - subscribedAt).toBeLessThanOrEqual(CHANGE_FEED.heartbeatIntervalMs + 500);
      expect(performance.now() - firstAt).toBeGreaterThan(CHANGE_FEED.heartbeatIntervalMs / 2);
    });

    it("ends the subscription when the caller's own key is disabled; the next one is refused", async () => {
      const { secret, verifierKey: key } = await server.store.createVerifierKey({
        organizationId: org.id,
        name: 'soon disabled',
      });
      const reader = await subscribe(secret);
      await reader.next((event) => event.type === 'subscribed');

      await server.store.setVerifierKeyStatus(key.id, 'disabled');
      await reader.ended();
      const again = await subscribe(secret);

      expect(again.response.status).toBe(401);
    });

    it('ends the stream cleanly once its lifetime has passed, as subscribed announced', async () => {
      const lifetime = 1_500;
      const short = await startTestServer({ changeFeed: { maxLifetimeMs: lifetime } });
      try {
        const organization = await short.createOrganization();
        const reader = await subscribe(organization.adminKey, short);
        const first = await reader.next((event) => event.type === 'subscribed');
        const subscribedAt = performance.now();

        await reader.ended(lifetime + 2 * CHANGE_FEED.heartbeatIntervalMs);
        const endedAfter = performance.now() - subscribedAt;

        const endsInMs = first.type === 'subscribed' ? first.ends_in_ms : Number.NaN;
        expect(endsInMs).toBeGreaterThan(0.9 * lifetime - 1);
        expect(endsInMs).toBeLessThanOrEqual(lifetime);
        expect(endedAfter).toBeGreaterThanOrEqual(endsInMs - 50);
        expect(endedAfter).toBeLessThanOrEqual(endsInMs + CHANGE_FEED.heartbeatIntervalMs + 500);
        // A clean end: the last event arrived whole, and nothing follows it.
        expect(reader.text()).toMatch(/\n\n$/);
        expect(short.changeFeed.size).toBe(0);
      } finally {
        await short.close();
      }
    });

    it('counts the open subscriptions and why they ended in /metrics', async () => {
      const exposition = async () => parsePrometheusText(await metrics.registry.metrics());
      const before = await exposition();
      const reader = await subscribe();
      await reader.next((event) => event.type === 'subscribed');
      const during = await exposition();
      reader.close();
      await reader.ended();
      await vi.waitFor(() => expect(server.changeFeed.size).toBe(before.sum('apikeys_change_feed_subscriptions')));
      const after = await exposition();

      expect(during.types.get('apikeys_change_feed_subscriptions')).toBe('gauge');
      expect(during.sum('apikeys_change_feed_subscriptions')).toBe(before.sum('apikeys_change_feed_subscriptions') + 1);
      const ended = (e: typeof before) =>
        e.sum('apikeys_change_feed_subscriptions_ended_total', { reason: 'client_closed' });
      expect(ended(after)).toBe(ended(before) + 1);
    });
  });

  const operation: RefusedOperation = {
    version: VERSION,
    operationId: 'streamKeyChanges',
    context: () => ({ server, organizationId: org.id }),
    path: async () => CHANGES_PATH,
    storeMethod: 'findCredential',
  };

  describe('400 invalid_request_error [2026-10-21]', () => {
    it.each([
      ['an unknown query parameter', `${CHANGES_PATH}?since=now`, {}, /since/],
      ['the version header twice', CHANGES_PATH, { 'vendor-version': `${VERSION}, ${VERSION}` }, /vendor-version/],
    ])('refuses %s, and subscribes no one', async (_, path, headers, message) => {
      const before = server.changeFeed.size;

      const result = await server.request(path, {
        headers: { 'x-api-key': verifierKey, 'vendor-version': VERSION, ...headers },
      });

      expectError(result, { ...OPERATION, status: 400, type: 'invalid_request_error', message });
      expect(server.changeFeed.size).toBe(before);
    });
  });

  describe('401 authentication_error [2026-10-21]', () => refusesUnauthenticated(operation));

  describe('403 permission_error [2026-10-21]', () => refusesRegularKeys(operation));

  describe('429 rate_limit_error [2026-10-21]', () => {
    refusesFailingAddresses(operation);

    it('refuses a key past its quota and an organization past its own, while another organization subscribes', async () => {
      const metrics = new Metrics();
      const quotas = await startTestServer({
        changeFeed: { maxSubscriptions: 100, maxPerCredential: 2, maxPerOrganization: 3 },
        metrics,
      });
      const opened: FeedReader[] = [];
      const open = async (credential: string) => {
        const reader = await subscribe(credential, quotas);
        opened.push(reader);
        return reader;
      };
      try {
        const [hostile, victim] = [await quotas.createOrganization('hostile'), await quotas.createOrganization()];
        const hostileKeys = {
          first: await quotas.store.createVerifierKey({ organizationId: hostile.id, name: 'one' }),
          second: await quotas.store.createVerifierKey({ organizationId: hostile.id, name: 'two' }),
        };
        const victimKey = await quotas.store.createVerifierKey({ organizationId: victim.id, name: 'gateway' });
        for (const reader of [
          await open(hostileKeys.first.secret),
          await open(hostileKeys.first.secret),
          await open(hostileKeys.second.secret),
        ]) {
          await reader.next((event) => event.type === 'subscribed');
        }

        const keyRefused = await refusedAnswer(await open(hostileKeys.first.secret));
        const organizationRefused = await refusedAnswer(await open(hostileKeys.second.secret));
        const victimReader = await open(victimKey.secret);
        await victimReader.next((event) => event.type === 'subscribed');
        const exposition = parsePrometheusText(await metrics.registry.metrics());

        expectError(keyRefused, {
          ...OPERATION,
          status: 429,
          type: 'rate_limit_error',
          message:
            'this key holds as many change subscriptions as one key may on this server (2); subscribe again once one of them has ended',
        });
        expectError(organizationRefused, {
          ...OPERATION,
          status: 429,
          type: 'rate_limit_error',
          message:
            /^the organization's keys hold as many change subscriptions as one organization may on this server \(3\)/,
        });
        expect(Number(keyRefused.response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(Number(organizationRefused.response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(victimReader.response.status).toBe(200);
        expect(quotas.changeFeed.size).toBe(4);
        expect(exposition.sum('apikeys_change_feed_subscriptions_refused_total', { reason: 'credential_quota' })).toBe(
          1,
        );
        expect(
          exposition.sum('apikeys_change_feed_subscriptions_refused_total', { reason: 'organization_quota' }),
        ).toBe(1);
      } finally {
        for (const reader of opened) {
          reader.close();
        }
        await quotas.close();
      }
    });

    it("counts each subscription against the caller's request budget, and refuses one past it", async () => {
      const limited = await startTestServer({
        rateLimits: { perMinute: 3, burst: 3, authFailuresPerMinute: 0 },
      });
      const opened: FeedReader[] = [];
      try {
        const organization = await limited.createOrganization();
        const { secret } = await limited.store.createVerifierKey({ organizationId: organization.id, name: 'gw' });
        const remaining: (string | null)[] = [];
        for (let n = 0; n < 3; n++) {
          const reader = await subscribe(secret, limited);
          opened.push(reader);
          remaining.push(reader.response.headers.get('ratelimit-remaining'));
        }
        const refused = await subscribe(secret, limited);
        opened.push(refused);

        expect(remaining).toEqual(['2', '1', '0']);
        expectError(await refusedAnswer(refused), {
          ...OPERATION,
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this/,
        });
        expect(limited.changeFeed.size).toBe(3);
      } finally {
        for (const reader of opened) {
          reader.close();
        }
        await limited.close();
      }
    });
  });

  describe('500 api_error [2026-10-21]', () => answersInternalErrors(operation, unusedVerifierKey(operation)));

  describe('503 service_unavailable_error [2026-10-21]', () => {
    answersUnavailable(operation, unusedVerifierKey(operation));

    it("refuses a subscription past the process's limit with retry-after, and takes one again once a slot frees", async () => {
      const metrics = new Metrics();
      const small = await startTestServer({ changeFeed: { maxSubscriptions: 1 }, metrics });
      try {
        const organization = await small.createOrganization();
        const first = await subscribe(organization.adminKey, small);
        await first.next((event) => event.type === 'subscribed');

        const refused = await subscribe(organization.adminKey, small);
        const answer = await refusedAnswer(refused);
        const closedBefore = parsePrometheusText(await metrics.registry.metrics()).sum(
          'apikeys_change_feed_subscriptions_ended_total',
          { reason: 'client_closed' },
        );
        first.close();
        await vi.waitFor(() => expect(small.changeFeed.size).toBe(0));
        const third = await subscribe(organization.adminKey, small);
        await third.next((event) => event.type === 'subscribed');
        const exposition = parsePrometheusText(await metrics.registry.metrics());

        expectError(answer, {
          ...OPERATION,
          status: 503,
          type: 'service_unavailable_error',
          message: 'this server holds as many change subscriptions as its operator allows; subscribe again later',
        });
        expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(exposition.sum('apikeys_change_feed_subscriptions_refused_total', { reason: 'limit' })).toBe(1);
        expect(exposition.sum('apikeys_change_feed_subscriptions_ended_total', { reason: 'client_closed' })).toBe(
          closedBefore + 1,
        );
        expect(exposition.sum('apikeys_change_feed_subscriptions')).toBe(1);
        // Refusals are counted and warned of, sampled: never a line per refusal at error level, never a stack.
        expect(small.logLines.filter((line) => /"level":50/.test(line))).toEqual([]);
        expect(small.logLines.filter((line) => line.includes('subscriptions refused'))).toHaveLength(1);
        expect(small.logLines.join('\n')).not.toMatch(/"stack"/);
      } finally {
        await small.close();
      }
    });

    it('ends every subscription when the server shuts down, and refuses new ones meanwhile', async () => {
      const closing = await startTestServer();
      const organization = await closing.createOrganization();
      const reader = await subscribe(organization.adminKey, closing);
      await reader.next((event) => event.type === 'subscribed');

      closing.changeFeed.close();
      await reader.ended(1_000);
      const refused = await subscribe(organization.adminKey, closing);
      const answer = await refusedAnswer(refused);
      await closing.close();

      expectError(answer, {
        ...OPERATION,
        status: 503,
        type: 'service_unavailable_error',
        message: 'the server is shutting down; subscribe again',
      });
    });
  });
});
