import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  expectError,
  expectMatchesSpec,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { microsToRfc3339, nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answersInternalErrors,
  answersUnavailable,
  type RefusedOperation,
  refusesFailingAddresses,
  refusesLargeBodies,
  refusesOtherMediaTypes,
  refusesRegularKeys,
  refusesUnauthenticated,
  unusedVerifierKey,
} from './refusals.js';

const VERSION = LATEST_API_VERSION;
const USAGE_PATH = '/v1/keys/usage';
const MINUTE = 60_000_000;
const OPERATION = { operationId: 'reportKeyUsage', version: VERSION } as const;

const minuteOf = (micros: number) => Math.floor(micros / MINUTE) * MINUTE;
/**
 * The server's clock runs an hour ahead of the store's, which dates the keys it creates: a use reported at the
 * server's "ten minutes ago" is still after the key's creation, as it is for a key that was created long ago.
 */
const AHEAD = 60 * MINUTE;
const serverNow = () => nowMicros() + AHEAD;

/** A moment in whole seconds, as a wall clock in UTC or shifted by an offset shows it (`2026-11-29T05:18:00`). */
interface Clock {
  utc: string;
  shifted(offsetMinutes: number): string;
}

function clockAt(micros: number): Clock {
  const show = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  return { utc: show(micros / 1000), shifted: (offsetMinutes) => show(micros / 1000 + offsetMinutes * 60_000) };
}

// From 2026-10-21 on.
describe('reportKeyUsage', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;
  let other: TestOrganizationWithClient;
  let verifierKey: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: serverNow });
    org = await server.createOrganization('usage tests');
    other = await server.createOrganization('another organization');
    ({ secret: verifierKey } = await server.store.createVerifierKey({ organizationId: org.id, name: 'gateway' }));
  });
  afterAll(() => server.close());

  const jsonHeaders = (credential: string) =>
    authHeaders(credential, { 'vendor-version': VERSION, 'content-type': 'application/json' });

  async function report(body: unknown, credential = verifierKey) {
    const result = await server.request(USAGE_PATH, {
      method: 'POST',
      headers: jsonHeaders(credential),
      body: JSON.stringify(body),
    });
    if (result.response.status === 200) {
      expectMatchesSpec('reportKeyUsage', result.response, result.body, VERSION);
    }
    return result;
  }

  async function newKey(organizationId = org.id) {
    const { apiKey } = await server.store.createApiKey({
      organizationId,
      name: 'used from a gateway',
      createdBy: { type: 'user', id: 'user_alice' },
    });
    return apiKey;
  }

  const lastUsedAt = async (organizationId: string, id: string) =>
    (await server.store.getApiKey(organizationId, id))?.lastUsedAt;

  const operation: RefusedOperation = {
    version: VERSION,
    operationId: 'reportKeyUsage',
    context: () => ({ server, organizationId: org.id }),
    path: async () => USAGE_PATH,
    body: { uses: [{ api_key_id: `apikey_${'A'.repeat(24)}`, used_at: '2026-11-27T12:00:00.000000Z' }] },
    storeMethod: 'findCredential',
    lookup: true,
  };

  describe('200 the uses received, recorded as the server records its own [2026-10-21]', () => {
    it("records each key's use to the minute with the server's next batch, with a verifier key or an admin key", async () => {
      const [first, second] = [await newKey(), await newKey()];
      const usedAt = serverNow() - 3 * MINUTE;

      const byVerifier = await report({ uses: [{ api_key_id: first.id, used_at: microsToRfc3339(usedAt) }] });
      const byAdmin = await report(
        { uses: [{ api_key_id: second.id, used_at: microsToRfc3339(usedAt) }] },
        org.adminKey,
      );
      const beforeFlush = await lastUsedAt(org.id, first.id);
      await server.flushKeyUsage();

      expect(byVerifier.body).toEqual({ received: 1, ignored: 0 });
      expect(byAdmin.body).toEqual({ received: 1, ignored: 0 });
      expect(beforeFlush).toBeNull();
      expect(await lastUsedAt(org.id, first.id)).toBe(minuteOf(usedAt));
      expect(await lastUsedAt(org.id, second.id)).toBe(minuteOf(usedAt));
    });

    it('counts a use up to a minute after the server clock as now, and keeps the latest of a key listed twice', async () => {
      const [future, twice] = [await newKey(), await newKey()];
      const now = serverNow();

      const result = await report({
        uses: [
          { api_key_id: future.id, used_at: microsToRfc3339(now + MINUTE / 2) },
          { api_key_id: twice.id, used_at: microsToRfc3339(now - 10 * MINUTE) },
          { api_key_id: twice.id, used_at: microsToRfc3339(now - 2 * MINUTE) },
        ],
      });
      await server.flushKeyUsage();

      expect(result.body).toEqual({ received: 3, ignored: 0 });
      expect(await lastUsedAt(org.id, future.id)).toBeGreaterThanOrEqual(minuteOf(now));
      expect(await lastUsedAt(org.id, future.id)).toBeLessThanOrEqual(minuteOf(serverNow()));
      expect(await lastUsedAt(org.id, twice.id)).toBe(minuteOf(now - 2 * MINUTE));
    });

    it.each([
      ['whole seconds in UTC, as Go and Java write them', (at: Clock) => `${at.utc}Z`],
      ['one fractional digit', (at: Clock) => `${at.utc}.5Z`],
      ['milliseconds, as JavaScript writes them', (at: Clock) => `${at.utc}.123Z`],
      ['microseconds, as this API writes them', (at: Clock) => `${at.utc}.123456Z`],
      ['the offset +00:00, as Python writes UTC', (at: Clock) => `${at.utc}+00:00`],
      ['an offset east of UTC', (at: Clock) => `${at.shifted(60)}+01:00`],
      ['an offset west of UTC, with minutes', (at: Clock) => `${at.shifted(-330)}-05:30`],
    ])('takes a time with %s, and records its minute', async (_, written) => {
      const key = await newKey();
      // The first whole second since the key was created: a use a gateway could have seen, once it has passed.
      const second = Math.ceil(key.createdAt / 1_000_000) * 1_000_000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, (second - nowMicros()) / 1000) + 1));

      const result = await report({ uses: [{ api_key_id: key.id, used_at: written(clockAt(second)) }] });
      await server.flushKeyUsage();

      expect(result.response.status, result.text).toBe(200);
      expect(await lastUsedAt(org.id, key.id)).toBe(minuteOf(second));
    });

    it("never moves a key's last use back: a late report of an earlier minute changes nothing", async () => {
      const key = await newKey();
      const now = serverNow();
      await report({ uses: [{ api_key_id: key.id, used_at: microsToRfc3339(now - MINUTE) }] });
      await server.flushKeyUsage();

      await report({ uses: [{ api_key_id: key.id, used_at: microsToRfc3339(now - 30 * MINUTE) }] });
      await server.flushKeyUsage();

      expect(await lastUsedAt(org.id, key.id)).toBe(minuteOf(now - MINUTE));
    });

    it("ignores another organization's keys and unknown IDs, and still records the caller's", async () => {
      const [ours, theirs] = [await newKey(), await newKey(other.id)];
      const usedAt = microsToRfc3339(serverNow());

      const result = await report({
        uses: [
          { api_key_id: theirs.id, used_at: usedAt },
          { api_key_id: `apikey_${'Z'.repeat(24)}`, used_at: usedAt },
          { api_key_id: ours.id, used_at: usedAt },
        ],
      });
      await server.flushKeyUsage();

      expect(result.body).toEqual({ received: 3, ignored: 2 });
      expect(await lastUsedAt(other.id, theirs.id)).toBeNull();
      expect(await lastUsedAt(org.id, ours.id)).toBe(minuteOf(serverNow()));
    });
    it("never changes another organization's keys: B's own verification in the same minute is still recorded", async () => {
      const theirs = await server.store.createApiKey({
        organizationId: other.id,
        name: "B's key",
        createdBy: { type: 'user', id: 'user_bob' },
      });
      const usedAt = microsToRfc3339(serverNow());

      // A names B's key, knowing only its ID, before B's own gateway verifies it in the same minute.
      const byA = await report({ uses: [{ api_key_id: theirs.apiKey.id, used_at: usedAt }] });
      const verification = await server.request('/v1/keys/verify', {
        method: 'POST',
        headers: jsonHeaders(other.adminKey),
        body: JSON.stringify({ key: theirs.secret }),
      });
      await server.flushKeyUsage();

      expect(byA.body).toEqual({ received: 1, ignored: 1 });
      expect(verification.body).toMatchObject({ valid: true });
      expect(await lastUsedAt(other.id, theirs.apiKey.id)).toBe(minuteOf(serverNow()));
    });

    it('ignores and counts the uses no gateway could have seen: of keys not valid then, before creation, far ahead', async () => {
      const [inactive, archived, expired, created, valid] = [
        await newKey(),
        await newKey(),
        await newKey(),
        await newKey(),
        await newKey(),
      ];
      await server.store.updateApiKey(org.id, inactive.id, { status: 'inactive' });
      await server.store.updateApiKey(org.id, archived.id, { status: 'archived' });
      const now = nowMicros();
      await server.store.updateApiKey(org.id, expired.id, { expiresAt: now + 2 * MINUTE });
      const use = (id: string, at: number | string) => ({
        api_key_id: id,
        used_at: typeof at === 'string' ? at : microsToRfc3339(at),
      });

      const result = await report({
        uses: [
          use(inactive.id, now),
          use(archived.id, now),
          use(expired.id, now + 3 * MINUTE),
          use(created.id, created.createdAt - MINUTE),
          use(created.id, '1970-01-01T00:00:00.000000Z'),
          use(created.id, '0001-01-01T00:00:00.000000Z'),
          use(valid.id, serverNow() + 2 * MINUTE),
          use(valid.id, '9999-12-31T23:59:59.999999Z'),
        ],
      });
      await server.flushKeyUsage();

      expect(result.body).toEqual({ received: 8, ignored: 8 });
      for (const key of [inactive, archived, expired, created, valid]) {
        expect(await lastUsedAt(org.id, key.id)).toBeNull();
      }
    });

    it('counts a use of a key that expired since, made while it was still valid', async () => {
      const key = await newKey();
      const now = nowMicros();
      await server.store.updateApiKey(org.id, key.id, { expiresAt: now + 5 * MINUTE });

      const result = await report({ uses: [{ api_key_id: key.id, used_at: microsToRfc3339(now) }] });
      await server.flushKeyUsage();

      expect(result.body).toEqual({ received: 1, ignored: 0 });
      expect(await lastUsedAt(org.id, key.id)).toBe(minuteOf(now));
    });

    it("counts a report against the caller's budget as one request per hundred uses, and refuses one past it", async () => {
      const limited = await startTestServer({ rateLimits: { perMinute: 24, burst: 24, authFailuresPerMinute: 0 } });
      try {
        const organization = await limited.createOrganization();
        const { secret } = await limited.store.createVerifierKey({ organizationId: organization.id, name: 'gw' });
        const reportOf = (uses: number) =>
          JSON.stringify({
            uses: Array.from({ length: uses }, () => ({
              api_key_id: `apikey_${'A'.repeat(24)}`,
              used_at: '2026-11-27T12:00:00.000000Z',
            })),
          });
        const send = (uses: number) =>
          limited.request(USAGE_PATH, { method: 'POST', headers: jsonHeaders(secret), body: reportOf(uses) });

        // 24 requests of budget: 10 + 1 + 10 (1,000, 30 and 901 uses), then 2 (101 uses) leaves 1: 1,000 is refused.
        const answers = [await send(1_000), await send(30), await send(901), await send(101), await send(1_000)];

        expect(answers.map((answer) => answer.response.status)).toEqual([200, 200, 200, 200, 429]);
        expect(answers.map((answer) => answer.response.headers.get('ratelimit-remaining'))).toEqual([
          '14',
          '13',
          '3',
          '1',
          '0',
        ]);
        expectError(answers[4] as NonNullable<(typeof answers)[4]>, {
          ...OPERATION,
          status: 429,
          type: 'rate_limit_error',
          message: /^too many requests for this verifier key; retry after/,
        });
      } finally {
        await limited.close();
      }
    });
  });

  describe('400 invalid_request_error [2026-10-21]', () => {
    const use = (id: string) => ({ api_key_id: id, used_at: '2026-11-27T12:00:00.000000Z' });
    it.each([
      ['no uses', () => ({}), /^uses: must have required property 'uses'/],
      ['an empty list', () => ({ uses: [] }), /^uses: /],
      ['more than 1,000 uses', (id: string) => ({ uses: Array.from({ length: 1001 }, () => use(id)) }), /^uses: /],
      ['an ID that is not an API key ID', () => ({ uses: [use('adminkey_1')] }), /^uses\[0\]\.api_key_id: /],
      [
        'a time with more than six fractional digits',
        (id: string) => ({ uses: [{ ...use(id), used_at: '2026-11-27T12:00:00.1234567Z' }] }),
        /^uses\[0\]\.used_at: /,
      ],
      [
        'a time without a time zone',
        (id: string) => ({ uses: [{ ...use(id), used_at: '2026-11-27T12:00:00' }] }),
        /^uses\[0\]\.used_at: /,
      ],
      [
        'a date without a time',
        (id: string) => ({ uses: [{ ...use(id), used_at: '2026-11-27' }] }),
        /^uses\[0\]\.used_at: /,
      ],
      ['an unknown field', (id: string) => ({ uses: [use(id)], extra: true }), /extra/],
      ['an unknown field of a use', (id: string) => ({ uses: [{ ...use(id), count: 3 }] }), /count/],
    ])('refuses %s, and records nothing', async (_, body, message) => {
      const key = await newKey();

      const result = await report(body(key.id));
      await server.flushKeyUsage();

      expectError(result, { ...OPERATION, status: 400, type: 'invalid_request_error', message });
      expect(await lastUsedAt(org.id, key.id)).toBeNull();
    });

    it('refuses a report with one impossible date (a February 30th), naming it, and records none of it', async () => {
      const key = await newKey();

      const result = await report({
        uses: [
          { api_key_id: key.id, used_at: microsToRfc3339(nowMicros()) },
          { api_key_id: key.id, used_at: '2026-02-30T12:00:00.000000Z' },
        ],
      });
      await server.flushKeyUsage();

      expect(result.response.status).toBe(400);
      expect(JSON.stringify(result.body)).toMatch(/uses/);
      expect(await lastUsedAt(org.id, key.id)).toBeNull();
    });
  });

  describe('401 authentication_error [2026-10-21]', () => refusesUnauthenticated(operation));

  describe('403 permission_error [2026-10-21]', () => refusesRegularKeys(operation));

  describe('413 request_too_large [2026-10-21]', () => refusesLargeBodies(operation, () => verifierKey));

  describe('415 invalid_request_error (unsupported media type) [2026-10-21]', () =>
    refusesOtherMediaTypes(operation, () => verifierKey));

  describe('429 rate_limit_error [2026-10-21]', () => refusesFailingAddresses(operation));

  describe('500 api_error [2026-10-21]', () => answersInternalErrors(operation, unusedVerifierKey(operation)));

  describe('503 service_unavailable_error [2026-10-21]', () =>
    answersUnavailable(operation, unusedVerifierKey(operation)));
});
