/**
 * Concurrent writes on one key, over HTTP, on the suite's engine (this file runs in the sqlite and postgres
 * projects): every write operation of every version, sent at once and repeated, keeps the promises it keeps when sent
 * alone. The checks of an interleaving are in serial-order.ts.
 */
import { API_VERSION, LATEST_API_VERSION } from '@apikeys/api-types';
import { grants } from '@apikeys/permissions';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  expectError,
  expectMatchesSpec,
  seededRandom,
  startTestServer,
  type TestOrganizationWithClient,
  type TestServer,
} from '@apikeys/server/testing';
import { type ApiKeyRecord, type AuditEventRecord, type EpochMicros, nowMicros } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnsweredWrite, type KeyState, type KeyWrite, unexplained } from './serial-order.js';

/** Trials of each test: enough that an interleaving the engine allows shows (PostgreSQL's did in 5 of 20). */
const TRIALS = 12;
/** Requests sent at once in a trial. */
const AT_ONCE = 8;
const HOUR_MICROS = 3_600_000_000;
/** The permissions an update may set, some of which grant `documents.read` through a wildcard. */
const PERMISSION_CHOICES = [[], ['documents.read'], ['documents.*', 'billing.write'], ['*'], ['billing.read']];
/** The metadata an update may set. */
const METADATA_CHOICES = [{}, { owner: 'team-a' }, { owner: 'team-b', plan: { tier: 'pro' } }];
/** The permissions whose list filter must agree with the key's final permissions. */
const FILTERED_PERMISSIONS = ['documents.read', 'billing.write', 'billing.read'];

describe('concurrent writes on one key', () => {
  let server: TestServer;
  let org: TestOrganizationWithClient;

  beforeAll(async () => {
    server = await startTestServer();
    org = await server.createOrganization('concurrency');
  });
  afterAll(() => server.close());

  async function post(path: string, version: string, body: unknown) {
    const result = await server.request(path, {
      method: 'POST',
      headers: authHeaders(org.adminKey, { 'vendor-version': version, 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    return { ...result, answeredAt: nowMicros() };
  }

  async function createKey(body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const { response, body: created } = await post(API_KEYS_PATH, LATEST_API_VERSION, { name: 'shared', ...body });
    expect(response.status).toBe(200);
    return created as { id: string; key: string };
  }

  async function stored(id: string): Promise<ApiKeyRecord> {
    return (await server.store.getApiKey(org.id, id)) as ApiKeyRecord;
  }

  /** The events of the organization about `id` (as target, or as the key a created one replaced), oldest first. */
  async function eventsOf(id: string): Promise<{ about: AuditEventRecord[]; replacing: AuditEventRecord[] }> {
    const result = await server.store.listAuditEvents({ organizationId: org.id, limit: 1000 });
    if (result.kind !== 'page') {
      throw new Error('no page of events');
    }
    const oldestFirst = [...result.events].reverse();
    return {
      about: oldestFirst.filter((event) => event.target.id === id && event.type !== 'api_key.created'),
      replacing: oldestFirst.filter((event) => event.type === 'api_key.created' && event.related?.id === id),
    };
  }

  it(`${TRIALS} times, ${AT_ONCE} rotations of one key without grace period mint exactly one successor`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { id } = await createKey();

      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, () =>
          post(`${apiKeyPath(id)}/rotate`, LATEST_API_VERSION, { grace_period_seconds: 0 }),
        ),
      );

      const rotated = answers.filter(({ response }) => response.status === 200);
      const context = `trial ${trial}: ${answers.map(({ response }) => response.status).join(' ')}`;
      expect(rotated, context).toHaveLength(1);
      for (const refused of answers.filter(({ response }) => response.status !== 200)) {
        expectError(refused, {
          operationId: 'rotateApiKey',
          status: 400,
          type: 'invalid_request_error',
          message: 'api_key_id: the key is expired; only an active or inactive key can be rotated',
          version: LATEST_API_VERSION,
        });
      }
      const successor = (rotated[0]?.body as { id?: string } | undefined)?.id;
      const { about, replacing } = await eventsOf(id);
      expect(about.map((event) => event.type)).toEqual(['api_key.rotated']);
      expect(replacing.map((event) => event.target.id)).toEqual([successor]);
      // Exactly one key came after the rotated one: its successor.
      const page = await server.store.listApiKeys({
        organizationId: org.id,
        limit: 2,
        cursor: { direction: 'before', id },
      });
      expect(page.kind === 'page' && page.keys.map((key) => key.id)).toEqual([successor]);
    }
  });

  it(`${TRIALS} times, ${AT_ONCE} creations at once make as many keys, each with its own secret and event`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, index) =>
          post(API_KEYS_PATH, LATEST_API_VERSION, { name: `created at once ${trial}.${index}` }),
        ),
      );

      for (const { response, body } of answers) {
        expectMatchesSpec('createApiKey', response, body, LATEST_API_VERSION);
        expect(response.status).toBe(200);
      }
      const created = answers.map(({ body }) => body as { id: string; key: string; name: string });
      expect(new Set(created.map((key) => key.id)).size).toBe(AT_ONCE);
      expect(new Set(created.map((key) => key.key)).size).toBe(AT_ONCE);
      for (const [index, key] of created.entries()) {
        expect(await stored(key.id)).toMatchObject({ name: `created at once ${trial}.${index}`, status: 'active' });
        const requestId = answers[index]?.response.headers.get('request-id');
        const events = await server.store.listAuditEvents({
          organizationId: org.id,
          limit: 10,
          filters: { targetId: key.id },
        });
        expect(events.kind === 'page' && events.events.map((event) => [event.type, event.requestId])).toEqual([
          ['api_key.created', requestId],
        ]);
      }
    }
  });

  /** A random write: an update through either version (name, status, expiry) or a rotation. */
  function randomWrite(random: () => number, index: number): KeyWrite {
    const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;
    const roll = random();
    if (roll < 0.3) {
      return { kind: 'rotate', gracePeriodSeconds: pick([0, 0, 3600]) };
    }
    const version = roll < 0.5 ? API_VERSION : LATEST_API_VERSION;
    const patch: Partial<KeyState> = {};
    while (Object.keys(patch).length === 0) {
      if (random() < 0.5) {
        patch.name = `name ${index}`;
      }
      if (random() < 0.5) {
        patch.status = pick(['active', 'inactive', 'archived'] as const);
      }
      if (version === LATEST_API_VERSION && random() < 0.4) {
        patch.expiresAt = pick([null, nowMicros() + HOUR_MICROS + index]);
      }
      if (version === LATEST_API_VERSION && random() < 0.4) {
        patch.permissions = JSON.stringify(pick(PERMISSION_CHOICES));
      }
      if (version === LATEST_API_VERSION && random() < 0.3) {
        patch.metadata = JSON.stringify(pick(METADATA_CHOICES));
      }
    }
    return { kind: 'update', version, patch };
  }

  function send(id: string, write: KeyWrite) {
    if (write.kind === 'rotate') {
      return post(`${apiKeyPath(id)}/rotate`, LATEST_API_VERSION, { grace_period_seconds: write.gracePeriodSeconds });
    }
    const { name, status, expiresAt, permissions, metadata } = write.patch;
    const body = {
      ...(name !== undefined && { name }),
      ...(status !== undefined && { status }),
      ...(expiresAt !== undefined && { expires_at: expiresAt === null ? null : microsToText(expiresAt) }),
      ...(permissions !== undefined && { permissions: JSON.parse(permissions) }),
      ...(metadata !== undefined && { metadata: JSON.parse(metadata) }),
    };
    return post(apiKeyPath(id), write.version, body);
  }

  /** The keys the list filter of `permission` shows, among the organization's. */
  async function listedWith(permission: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: { direction: 'after'; id: string } | undefined;
    for (;;) {
      const page = await server.store.listApiKeys({
        organizationId: org.id,
        limit: 100,
        cursor,
        filters: { permission },
      });
      if (page.kind !== 'page') {
        throw new Error('no page of keys');
      }
      ids.push(...page.keys.map((key) => key.id));
      const last = page.keys.at(-1);
      if (!page.hasMore || last === undefined) {
        return ids;
      }
      cursor = { direction: 'after', id: last.id };
    }
  }

  it(`${TRIALS} times, updates (name, status, expiry, permissions, metadata) through both versions, rotations and a creation interleaved on one key leave a state and an audit chain one serial order explains`, async () => {
    const random = seededRandom(20_261_127);
    for (let trial = 0; trial < TRIALS; trial++) {
      const { id } = await createKey(trial % 2 === 0 ? {} : { expires_at: microsToText(nowMicros() + HOUR_MICROS) });
      const initial = await stored(id);
      const writes = Array.from({ length: AT_ONCE }, (_, index) => randomWrite(random, index));

      // A creation of another key goes among them: it changes nothing of this key, and records only its own.
      const [created, ...answers] = await Promise.all([
        post(API_KEYS_PATH, LATEST_API_VERSION, { name: `created among ${trial}` }),
        ...writes.map((write) => send(id, write)),
      ]);

      const answered: AnsweredWrite[] = answers.map(({ response, body, answeredAt }, index) => {
        const write = writes[index] as KeyWrite;
        expectMatchesSpec(
          write.kind === 'rotate' ? 'rotateApiKey' : 'updateApiKey',
          response,
          body,
          write.kind === 'rotate' ? LATEST_API_VERSION : (write.version as typeof API_VERSION),
        );
        return {
          write,
          status: response.status,
          body,
          requestId: response.headers.get('request-id') ?? '',
          answeredAt,
        };
      });
      const { about, replacing } = await eventsOf(id);
      const final = await stored(id);
      const context = JSON.stringify(answered.map(({ write, status }) => [write, status]));
      expect(unexplained(stateOf(initial), answered, about, stateOf(final)), context).toEqual([]);
      // The permissions index the list filter reads agrees with the permissions the key ended with.
      for (const permission of FILTERED_PERMISSIONS) {
        const held = (final.permissions ?? []).some((name) => grants(name, permission));
        expect((await listedWith(permission)).includes(id), `${context}: ${permission}`).toBe(held);
      }
      const acknowledgedRotations = answered.filter(({ write, status }) => write.kind === 'rotate' && status === 200);
      expect(replacing.map((event) => event.requestId).sort(), context).toEqual(
        acknowledgedRotations.map(({ requestId }) => requestId).sort(),
      );
      expect(created.response.status).toBe(200);
      const createdId = (created.body as { id: string }).id;
      expect(await stored(createdId)).toMatchObject({ name: `created among ${trial}`, status: 'active' });
      const createdEvents = await server.store.listAuditEvents({
        organizationId: org.id,
        limit: 10,
        filters: { targetId: createdId },
      });
      expect(
        createdEvents.kind === 'page' && createdEvents.events.map((event) => [event.type, event.requestId]),
      ).toEqual([['api_key.created', created.response.headers.get('request-id')]]);
    }
  });
});

function stateOf(key: ApiKeyRecord): KeyState {
  return {
    name: key.name,
    status: key.status,
    expiresAt: key.expiresAt ?? null,
    permissions: JSON.stringify(key.permissions ?? []),
    metadata: JSON.stringify(key.metadata ?? {}),
  };
}

/** Microseconds as an RFC 3339 datetime with six fractional digits. */
function microsToText(micros: EpochMicros): string {
  const seconds = Math.floor(micros / 1_000_000);
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(micros - seconds * 1_000_000).padStart(6, '0')}Z`;
}
