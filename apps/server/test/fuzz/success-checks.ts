/**
 * What a success (2xx) must show beyond its schema: only the caller's keys, lists filtered as asked, writes that
 * return what was sent, and for each operation what the spec's prose says its answer is (the key a create made,
 * the two keys of a rotation, an update applied to the key, the verdict of a verification).
 */
import { isDeepStrictEqual } from 'node:util';
import { API_KEY_STATUSES_BY_VERSION, LATEST_API_VERSION } from '@apikeys/api-types';
import { type ApiKeyRecord, effectiveStatus } from '@apikeys/store';
import { instantOf } from './datetimes.js';
import type { Fixture } from './fixture.js';
import { InvariantError } from './invariant-error.js';
import type { Expectation } from './oracle.js';
import { KEY_ID_PLACEHOLDERS, KEYS, type KeyIdPlaceholder, type Organization, placeholderOf } from './placeholders.js';

/** What the success checks know of the run. */
export interface SuccessContext {
  fixture: Fixture;
  /** The keys of each organization: the fixture's, and those created during the run. */
  keyIds: Record<Organization, Set<string>>;
}

type Json = Record<string, unknown>;

function fail(invariant: string, detail: string): never {
  throw new InvariantError(invariant, detail);
}

/** Fields whose values a client chose: a key's name and principal may hold any text, IDs included. */
const CLIENT_CHOSEN = new Set(['name', 'principal']);

/** A copy of a response body without the values clients chose (names and principals), which may look like IDs. */
export function withoutNames(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => (CLIENT_CHOSEN.has(key) ? '' : value));
}

/** Whether two values are the same, datetimes compared as the instants they name. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') {
    const [x, y] = [instantOf(a), instantOf(b)];
    if (x !== undefined && y !== undefined) {
      return x === y;
    }
  }
  return isDeepStrictEqual(a, b);
}

/** A stored expiry as the instant a response names, or null. */
const expiryOf = (record: ApiKeyRecord) => (record.expiresAt == null ? null : BigInt(record.expiresAt));

/** A response's `expires_at` as an instant, or null. */
const instantIn = (value: unknown) => (typeof value === 'string' ? (instantOf(value) ?? 'unreadable') : null);

/** Where each list filter looks in an item (the parameters' descriptions), and whether a value matches. */
const FILTERS: Readonly<Record<string, (item: Json, value: string, context: FilterContext) => boolean>> = {
  status: (item, value) => item.status === value,
  type: (item, value) => item.type === value,
  workspace_id: (item, value, { defaultWorkspace }) =>
    'workspace_id' in item
      ? item.workspace_id === value || (item.workspace_id === null && value === defaultWorkspace)
      : (item.scope as Json | undefined)?.workspace_id === value,
  created_by_user_id: (item, value) =>
    (item.created_by as Json | null)?.id === value && (item.created_by as Json | null)?.type === 'user',
  target_id: (item, value) => (item.target as Json | undefined)?.id === value,
  actor_id: (item, value) => (item.actor as Json | undefined)?.id === value,
  occurred_after: (item, value) => (instantOf(String(item.occurred_at)) ?? 0n) > (instantOf(value) ?? 0n),
  occurred_before: (item, value) => (instantOf(String(item.occurred_at)) ?? 0n) < (instantOf(value) ?? 0n),
};

interface FilterContext {
  defaultWorkspace: string;
}

/** Every item of a page matches every filter of the query (a repeated one: any of its values). */
function checkFilters(expectation: Expectation, data: Json[], context: FilterContext): void {
  for (const [name, values] of expectation.query) {
    const matches = FILTERS[name];
    if (!matches) {
      continue;
    }
    for (const item of data) {
      if (!values.some((value) => matches(item, value, context))) {
        fail(
          'a list holds only the items its filters ask for',
          `${name}=${JSON.stringify(values)} but an item has ${JSON.stringify(item).slice(0, 300)}`,
        );
      }
    }
  }
}

/** The fixture key a path names, with its record, when it is one of the caller's. */
function namedKey(expectation: Expectation, context: SuccessContext) {
  const id = expectation.pathValues.api_key_id;
  const placeholder = id === undefined ? undefined : placeholderOf(id, KEY_ID_PLACEHOLDERS, context.fixture.bindings);
  const key = id === undefined ? undefined : context.fixture.keys.get(id);
  return placeholder && key ? { placeholder, record: key.record } : undefined;
}

/** The status a response shows for a record: archived, then expired, then the stored status. */
function shownStatus(record: Pick<ApiKeyRecord, 'status' | 'expiresAt'>, expectation: Expectation): string {
  const status = effectiveStatus(record, Number(expectation.now));
  // A version without the status `expired` shows an expired key as inactive (the spec's Versioning section).
  const statuses: readonly string[] = API_KEY_STATUSES_BY_VERSION[expectation.version ?? LATEST_API_VERSION];
  return statuses.includes(status) ? status : 'inactive';
}

function expectField(what: string, shown: unknown, expected: unknown): void {
  if (!same(shown, expected)) {
    fail(`${what}`, `shows ${JSON.stringify(shown)}, expected ${JSON.stringify(expected)}`);
  }
}

/** A key read or updated: the fixture's key with the update's fields applied. */
function checkKey(expectation: Expectation, context: SuccessContext, body: Json): void {
  const named = namedKey(expectation, context);
  if (!named) {
    return;
  }
  const sent = (expectation.operation?.operationId === 'updateApiKey' ? expectation.body : {}) as Json;
  const { record } = named;
  const after = {
    status: (sent.status as ApiKeyRecord['status'] | null | undefined) ?? record.status,
    expiresAt:
      'expires_at' in sent
        ? sent.expires_at === null
          ? null
          : Number(instantOf(String(sent.expires_at)))
        : (record.expiresAt ?? null),
  };
  const what = `${expectation.operation?.operationId} shows the key as the spec says it is now`;
  expectField(what, body.id, context.fixture.bindings[named.placeholder]);
  expectField(what, body.name, (sent.name as string | null | undefined) ?? record.name);
  expectField(what, body.status, shownStatus(after, expectation));
  if ('expires_at' in body) {
    expectField(what, instantIn(body.expires_at), after.expiresAt === null ? null : BigInt(after.expiresAt));
  }
}

/** A created key: what was sent, created by the caller's admin key, active, never used. */
function checkCreated(expectation: Expectation, context: SuccessContext, body: Json): void {
  const sent = expectation.body as Json;
  const organization = expectation.caller?.organization ?? 'own';
  const { bindings, defaultWorkspaces } = context.fixture;
  const what = 'createApiKey returns the key it created';
  expectField(what, body.name, sent.name);
  expectField(what, body.status, 'active');
  expectField(what, body.last_used_at, null);
  expectField(what, instantIn(body.expires_at), sent.expires_at == null ? null : instantOf(String(sent.expires_at)));
  const adminKey = organization === 'own' ? bindings.$ADMIN_KEY_ID : bindings.$OTHER_ADMIN_KEY_ID;
  expectField(what, body.created_by, { type: 'service_account', id: adminKey });
  const workspace = sent.workspace_id === undefined ? defaultWorkspaces[organization] : sent.workspace_id;
  expectField(
    what,
    body.scope,
    workspace === null ? { type: 'organization' } : { type: 'workspace', workspace_id: workspace },
  );
  const principal = (sent.principal ?? null) as Json | null;
  expectField(what, body.principal, principal);
}

/** A rotation: a new key like the old one, and the old one expiring at the end of the grace period. */
function checkRotated(expectation: Expectation, context: SuccessContext, body: Json): void {
  const named = namedKey(expectation, context);
  const previous = body.rotated_api_key as Json;
  if (!named) {
    fail('rotateApiKey rotates the key it names', `no fixture key of the caller's was named, yet ${previous.id}`);
  }
  const what = 'rotateApiKey returns the new key and the old one as the spec says';
  const { record } = named;
  expectField(what, previous.id, context.fixture.bindings[named.placeholder]);
  expectField(what, body.name, record.name);
  expectField(what, body.status, 'active');
  expectField(what, instantIn(body.expires_at), expiryOf(record));
  const grace =
    BigInt((((expectation.body ?? {}) as Json).grace_period_seconds as number | undefined) ?? 0) * 1_000_000n;
  const shown = instantIn(previous.expires_at);
  const old = expiryOf(record);
  // The server's clock has microseconds; Date.now() is rounded down to its millisecond, hence the + 1.
  const [earliest, latest] = [expectation.now + grace, BigInt(Date.now() + 1) * 1000n + grace];
  const fits =
    typeof shown === 'bigint' &&
    ((old !== null && old <= earliest && shown === old) || (shown >= earliest - 1_000_000n && shown <= latest));
  if (!fits) {
    fail(what, `the old key expires at ${previous.expires_at}, not at the end of its grace period`);
  }
}

/** A verification: the verdict the fixture's state gives the secret. */
function checkVerdict(expectation: Expectation, context: SuccessContext, body: Json): void {
  const { verdict } = expectation;
  if (!verdict) {
    return;
  }
  const key = body.key as Json | null;
  const what = 'verifyApiKey answers the verdict the key state gives';
  expectField(what, body.code, verdict.code);
  expectField(what, body.valid, verdict.code === 'VALID');
  expectField(what, key?.id ?? null, verdict.key ? context.fixture.bindings[verdict.key] : null);
  if (key && verdict.key) {
    expectField(what, key.status, KEYS[verdict.key as KeyIdPlaceholder].state);
    expectField(what, key.organization_id, context.fixture.organizations[expectation.caller?.organization ?? 'own']);
  }
}

/** A 2xx keeps every invariant of a success, and shows what its operation's prose says it shows. */
export function checkSuccess(context: SuccessContext, expectation: Expectation, body: unknown, status: number): void {
  if (expectation.violations.length > 0) {
    fail('no silent acceptance', `${status} for ${expectation.violations.map((v) => v.reason).join('; ')}`);
  }
  const json = body as Json;
  const organization = expectation.caller?.organization ?? 'own';
  const operationId = expectation.operation?.operationId;
  if (operationId === 'createApiKey' || operationId === 'rotateApiKey') {
    // The key it returns is new, and the caller's: the store checks confirm it was created there.
    context.keyIds[organization].add(String(json.id));
  }
  const own = context.keyIds[organization];
  const idShape = new RegExp(`${context.fixture.bindings.$KEY_ID.replace(/_.*$/, '')}_[A-Za-z0-9]{24}`, 'g');
  // Names and principals are left out: a client may name a key, or bind it, after any ID.
  for (const id of JSON.stringify(withoutNames(body)).match(idShape) ?? []) {
    if (!own.has(id)) {
      fail(
        "a 200 shows only the caller's keys",
        `${id} does not belong to the caller's organization (${organization})`,
      );
    }
  }
  if (Array.isArray(json.data)) {
    checkFilters(expectation, json.data as Json[], {
      defaultWorkspace: context.fixture.defaultWorkspaces[organization],
    });
  }
  const sent = expectation.body;
  if (sent !== null && typeof sent === 'object' && !Array.isArray(sent)) {
    for (const [name, value] of Object.entries(sent)) {
      const returned = json[name];
      if (value !== null && returned !== undefined && typeof returned === typeof value && !same(returned, value)) {
        fail(
          'a write returns exactly what was sent',
          `${name}: sent ${JSON.stringify(value)}, returned ${JSON.stringify(returned)}`,
        );
      }
    }
  }
  switch (operationId) {
    case 'getApiKey':
    case 'updateApiKey':
      checkKey(expectation, context, json);
      break;
    case 'createApiKey':
      checkCreated(expectation, context, json);
      break;
    case 'rotateApiKey':
      checkRotated(expectation, context, json);
      break;
    case 'verifyApiKey':
      checkVerdict(expectation, context, json);
      break;
    case 'getAuditEvent':
      expectField('getAuditEvent returns the event it names', json.id, expectation.pathValues.audit_event_id);
      break;
  }
}
