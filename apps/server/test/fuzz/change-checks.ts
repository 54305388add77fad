/**
 * What a request may change in the store, judged from what changed: a refused request, a read and a verification
 * that finds no valid key change nothing (no key, no new key, no audit event); an accepted write changes exactly
 * what it returned, with the audit events the spec's Audit trail section names, carrying its request-id; a valid
 * verification changes nothing but its key's `last_used_at`, to the minute.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApiKeyRecord, AuditEventRecord } from '@apikeys/store';
import { instantOf } from './datetimes.js';
import { type Answer, headerOf, type NoAnswer } from './exchange.js';
import type { Fixture } from './fixture.js';
import { InvariantError } from './invariant-error.js';
import type { Expectation } from './oracle.js';
import type { Organization } from './placeholders.js';
import type { KeyChange, StoreChanges } from './state.js';

const MINUTE_MICROS = 60_000_000;

/** The invariant of requests that may change nothing. */
export const NOTHING_CHANGES = 'a refused request, a read or a verification that finds no valid key changes nothing';
/** The invariant of accepted writes and valid verifications. */
export const WRITE_CHANGES = 'an accepted write changes exactly what it returns, with its audit events';

/** What the judgement needs: the answer and its request-id, what changed, and the run's fixture. */
export interface ChangeInput {
  expectation: Expectation;
  answer: Answer | NoAnswer;
  requestId: string | undefined;
  changes: StoreChanges;
  fixture: Fixture;
}

type Json = Record<string, unknown>;

/** An audit event the request must have written. */
interface ExpectedEvent {
  type: AuditEventRecord['type'];
  target: string;
  related: string | null;
}

/** What an accepted request may change: the keys (each with its check), the keys it creates, its events. */
interface Allowance {
  keys: Map<string, (change: KeyChange) => string | undefined>;
  created: { id: string; check: (record: ApiKeyRecord) => string | undefined }[];
  /** The events it writes; `undefined` when it writes one `api_key.updated` exactly when it changed its key. */
  events?: ExpectedEvent[];
}

const NOTHING: Allowance = { keys: new Map(), created: [], events: [] };

/** Whether two records differ in no field but those listed. */
function differOnlyIn(a: ApiKeyRecord, b: ApiKeyRecord, fields: (keyof ApiKeyRecord)[]): boolean {
  const strip = (record: ApiKeyRecord) => {
    const copy: Partial<ApiKeyRecord> = { ...record };
    for (const field of fields) {
      delete copy[field];
    }
    return copy;
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

const micros = (value: unknown) => (typeof value === 'string' ? Number(instantOf(value)) : null);

/** A key stored as a response showed it: the same name, expiry and (stored) status. */
function storedAsShown(record: ApiKeyRecord, shown: Json): string | undefined {
  if (record.name !== shown.name) {
    return `the name ${JSON.stringify(record.name)} is stored, ${JSON.stringify(shown.name)} returned`;
  }
  if ('expires_at' in shown && (record.expiresAt ?? null) !== micros(shown.expires_at)) {
    return `the expiry ${record.expiresAt} is stored, ${String(shown.expires_at)} returned`;
  }
  const expired = record.expiresAt != null && shown.status !== 'archived';
  if (record.status !== shown.status && !(expired && (shown.status === 'expired' || shown.status === 'inactive'))) {
    return `the status ${record.status} is stored, ${String(shown.status)} returned`;
  }
  for (const field of ['permissions', 'metadata'] as const) {
    if (field in shown && !isDeepStrictEqual(record[field], shown[field])) {
      return `the ${field} ${JSON.stringify(record[field])} are stored, ${JSON.stringify(shown[field])} returned`;
    }
  }
  return undefined;
}

/** What an accepted write or verification may change. */
function allowanceOf(input: ChangeInput, body: Json): Allowance {
  const { expectation } = input;
  switch (expectation.operation?.operationId) {
    case 'updateApiKey': {
      const check = ({ expected, stored }: KeyChange) =>
        !stored
          ? 'the key is gone'
          : !differOnlyIn(expected, stored, ['name', 'status', 'expiresAt', 'permissions', 'metadata'])
            ? 'fields other than name, status, expires_at, permissions and metadata changed'
            : storedAsShown(stored, body);
      return { keys: new Map([[String(body.id), check]]), created: [] };
    }
    case 'createApiKey':
      return {
        keys: new Map(),
        created: [{ id: String(body.id), check: (record) => storedAsShown(record, body) }],
        events: [{ type: 'api_key.created', target: String(body.id), related: null }],
      };
    case 'rotateApiKey': {
      const previous = body.rotated_api_key as Json;
      const check = ({ expected, stored }: KeyChange) =>
        !stored
          ? 'the key is gone'
          : !differOnlyIn(expected, stored, ['expiresAt'])
            ? 'fields other than expires_at changed'
            : storedAsShown(stored, previous);
      const [oldId, newId] = [String(previous.id), String(body.id)];
      return {
        keys: new Map([[oldId, check]]),
        created: [{ id: newId, check: (record) => storedAsShown(record, body) }],
        events: [
          { type: 'api_key.rotated', target: oldId, related: newId },
          { type: 'api_key.created', target: newId, related: oldId },
        ],
      };
    }
    case 'verifyApiKey': {
      const { verdict, now } = expectation;
      if (verdict?.code !== 'VALID' || !verdict.key) {
        return NOTHING;
      }
      // "A key's `last_used_at` is the minute of its last valid verification", written in batches (flushed here).
      const earliest = Math.floor(Number(now) / MINUTE_MICROS) * MINUTE_MICROS;
      const check = ({ expected, stored }: KeyChange) =>
        !stored || !differOnlyIn(expected, stored, ['lastUsedAt'])
          ? 'fields other than last_used_at changed'
          : (stored.lastUsedAt ?? 0) < earliest ||
              (stored.lastUsedAt ?? 0) > Date.now() * 1000 ||
              (stored.lastUsedAt ?? 0) % MINUTE_MICROS !== 0
            ? `last_used_at is ${stored.lastUsedAt}, not the minute of the verification`
            : undefined;
      return { keys: new Map([[input.fixture.bindings[verdict.key], check]]), created: [], events: [] };
    }
    default:
      return NOTHING;
  }
}

/** The events a request wrote, checked against those it must write, each carrying its request-id and caller. */
function checkEvents(input: ChangeInput, written: AuditEventRecord[], expected: ExpectedEvent[]): string | undefined {
  const { requestId, expectation, fixture } = input;
  const actor =
    expectation.caller?.organization === 'other'
      ? fixture.bindings.$OTHER_ADMIN_KEY_ID
      : fixture.bindings.$ADMIN_KEY_ID;
  const seen = written
    .map((event) => ({ type: event.type, target: event.target.id, related: event.related?.id ?? null }))
    .sort((a, b) => a.type.localeCompare(b.type));
  const wanted = [...expected].sort((a, b) => a.type.localeCompare(b.type));
  if (!isDeepStrictEqual(seen, wanted)) {
    return `events ${JSON.stringify(seen)}, expected ${JSON.stringify(wanted)}`;
  }
  const stray = written.find(
    (event) => event.requestId !== requestId || event.actor.type !== 'admin_key' || event.actor.id !== actor,
  );
  return stray && `event ${stray.id} records request ${stray.requestId} by ${JSON.stringify(stray.actor)}`;
}

/** Throws an `InvariantError` when the store changed in a way the request and its answer do not allow. */
export function judgeChanges(input: ChangeInput): void {
  const { answer, expectation, changes } = input;
  const accepted = answer.answered && answer.status >= 200 && answer.status < 300;
  // A JSON answer; the change feed's answer is an event stream, and changes nothing.
  const json = accepted && /^application\/json/.test(headerOf(answer, 'content-type') ?? '');
  const body = json ? (JSON.parse(answer.body.toString('utf8')) as Json) : {};
  const allowance = accepted ? allowanceOf(input, body) : NOTHING;
  const invariant = allowance === NOTHING ? NOTHING_CHANGES : WRITE_CHANGES;
  const problems: string[] = [];
  for (const change of changes.keys) {
    const check = allowance.keys.get(change.id);
    const problem = check ? check(change) : 'it changed';
    if (problem) {
      problems.push(`key ${change.id}: ${problem}`);
    }
  }
  const caller: Organization = expectation.caller?.organization ?? 'own';
  for (const organization of ['own', 'other'] as const) {
    const created = changes.created[organization];
    const wanted = organization === caller ? allowance.created : [];
    if (created.length !== wanted.length || !wanted.every((w) => created.some((c) => c.id === w.id))) {
      problems.push(`created in ${organization}: ${created.map((c) => c.id).join(', ') || 'none'}`);
    }
    for (const { id, check } of wanted) {
      const record = created.find((c) => c.id === id);
      const problem = record && check(record);
      if (problem) {
        problems.push(`created key ${id}: ${problem}`);
      }
    }
    const events = changes.events[organization];
    const keyChanged = changes.keys.some((change) => allowance.keys.has(change.id));
    const expected =
      organization !== caller
        ? []
        : (allowance.events ??
          (keyChanged ? [{ type: 'api_key.updated' as const, target: String(body.id), related: null }] : []));
    const problem = checkEvents(input, events, expected);
    if (problem) {
      problems.push(`audit trail of ${organization}: ${problem}`);
    }
  }
  if (problems.length > 0) {
    const status = answer.answered ? answer.status : 'no answer';
    throw new InvariantError(invariant, `${status}; ${problems.join('; ')}`);
  }
}
