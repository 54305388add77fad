import type { ApiKeyStatus, AuditEventRecord, EpochMicros } from '@apikeys/store';

/**
 * What the audit trail records of a key: the fields its events change. Permissions and metadata are held as their
 * JSON text, so that states compare field by field with `===`.
 */
export interface KeyState {
  name: string;
  status: ApiKeyStatus;
  expiresAt: EpochMicros | null;
  permissions: string;
  metadata: string;
}

/** A write sent to one key: an update (a field absent is left unchanged) or a rotation. */
export type KeyWrite =
  | { kind: 'update'; version: string; patch: Partial<KeyState> }
  | { kind: 'rotate'; gracePeriodSeconds: number };

/** A write and what the server answered. */
export interface AnsweredWrite {
  write: KeyWrite;
  status: number;
  body: unknown;
  requestId: string;
  /** When the answer came (microseconds, this process's clock): the write was made before it, if at all. */
  answeredAt: EpochMicros;
}

const FIELDS = ['name', 'status', 'expiresAt', 'permissions', 'metadata'] as const;

/** A recorded value of `field`, in the form of `KeyState`. */
function stateValue(field: (typeof FIELDS)[number], value: unknown): unknown {
  return field === 'permissions' || field === 'metadata' ? JSON.stringify(value) : value;
}

/** Whether a key in `state` has expired at `moment`: not archived, and its expiry is at or before it. */
function expiredAt(state: KeyState, moment: EpochMicros): boolean {
  return state.status !== 'archived' && state.expiresAt !== null && state.expiresAt <= moment;
}

/** Whether an update changes what only a key that has not expired may change. */
function revives(patch: Partial<KeyState>): boolean {
  return patch.expiresAt !== undefined || patch.status === 'active' || patch.status === 'inactive';
}

/** A response's timestamp (`2027-01-31T00:00:00.000000Z`) as microseconds. */
function timestampMicros(text: string): EpochMicros {
  return Date.parse(`${text.slice(0, 19)}Z`) * 1000 + Number(text.slice(20, 26));
}

/** The key fields a 2026-10-21 or 2023-06-01 key body shows, against a state: the differences, as text. */
function bodyDiffers(body: unknown, state: KeyState, version: string): string | undefined {
  const shown = body as { name?: string; status?: string; expires_at?: string | null };
  if (shown.name !== state.name) {
    return `name ${shown.name} against ${state.name}`;
  }
  const expiryShown = version !== '2023-06-01';
  if (expiryShown) {
    for (const field of ['permissions', 'metadata'] as const) {
      const value = JSON.stringify((body as Record<string, unknown>)[field]);
      if (value !== state[field]) {
        return `${field} ${value} against ${state[field]}`;
      }
    }
    const micros = shown.expires_at == null ? null : timestampMicros(shown.expires_at);
    if (micros !== state.expiresAt) {
      return `expires_at ${shown.expires_at} against ${state.expiresAt}`;
    }
  }
  // An expired key shows `expired` (2023-06-01: `inactive`); otherwise the stored status.
  const status = shown.status;
  const expiredForm = expiryShown ? 'expired' : 'inactive';
  if (status !== state.status && !(status === expiredForm && state.expiresAt !== null)) {
    return `status ${status} against ${state.status}`;
  }
  return undefined;
}

/**
 * Checks that the writes sent concurrently to one key, their answers, the key's audit chain and its final state are
 * explained by one serial order of the acknowledged writes: the chain's. Each event must belong to an acknowledged
 * write and each acknowledged change must have one; replayed in order from `initial`, each event starts from the
 * state the one before left (an unbroken chain), makes the change its write asked for, and is one its write may make
 * at the moment it records (no expired key revived or rotated); the replay ends in `final`. A write acknowledged
 * without an event must have found the key as it asked for it, and a refused write must have met a state that
 * refuses it. Returns what does not hold; nothing when all does.
 */
export function unexplained(
  initial: KeyState,
  answered: readonly AnsweredWrite[],
  chain: readonly AuditEventRecord[],
  final: KeyState,
): string[] {
  const problems: string[] = [];
  const byRequest = new Map(answered.map((write) => [write.requestId, write]));
  const eventOf = new Map<string, AuditEventRecord>();
  for (const event of chain) {
    const write = event.requestId === null ? undefined : byRequest.get(event.requestId);
    if (write?.status !== 200) {
      problems.push(`event ${event.id} (${event.type}) belongs to no acknowledged write`);
    } else if (eventOf.has(write.requestId)) {
      problems.push(`the write ${write.requestId} has two events`);
    }
    if (write) {
      eventOf.set(write.requestId, event);
    }
  }
  const states: KeyState[] = [initial];
  const after = new Map<string, KeyState>();
  let state = initial;
  let previousAt = Number.NEGATIVE_INFINITY;
  for (const event of chain) {
    const write = event.requestId === null ? undefined : byRequest.get(event.requestId);
    const at = event.occurredAt;
    const next: KeyState = { ...state };
    for (const field of FIELDS) {
      const change = event.changes[field];
      if (change === undefined) {
        continue;
      }
      const from = stateValue(field, change.from);
      if (from !== state[field]) {
        problems.push(`event ${event.id} changes ${field} from ${from}, but the chain left ${state[field]}`);
      }
      Object.assign(next, { [field]: stateValue(field, change.to) });
    }
    if (write?.write.kind === 'update') {
      const { patch } = write.write;
      if (event.type !== 'api_key.updated') {
        problems.push(`the update ${write.requestId} recorded ${event.type}`);
      }
      for (const field of FIELDS) {
        if (patch[field] !== undefined && next[field] !== patch[field]) {
          problems.push(`the update ${write.requestId} set ${field} to ${next[field]}, not ${patch[field]}`);
        }
        if (patch[field] === undefined && event.changes[field] !== undefined) {
          problems.push(`the update ${write.requestId} changed ${field}, which it did not name`);
        }
      }
      if (revives(patch) && expiredAt(state, at)) {
        problems.push(`the update ${write.requestId} changed a key that had expired at ${at}`);
      }
    } else if (write?.write.kind === 'rotate') {
      const grace = write.write.gracePeriodSeconds * 1_000_000;
      if (event.type !== 'api_key.rotated') {
        problems.push(`the rotation ${write.requestId} recorded ${event.type}`);
      }
      if (state.status === 'archived' || expiredAt(state, at)) {
        problems.push(`the rotation ${write.requestId} rotated a key that was ${state.status} or expired at ${at}`);
      }
      // The rotation's moment lies after the change before it and at or before its own event.
      const end = next.expiresAt;
      const kept = end === state.expiresAt && state.expiresAt !== null && state.expiresAt <= at + grace;
      if (!kept && (end === null || end > at + grace || end <= previousAt + grace)) {
        problems.push(`the rotation ${write.requestId} set the expiry to ${end}, outside its moment plus ${grace}`);
      }
      const shown = (write.body as { rotated_api_key?: unknown }).rotated_api_key;
      const differs = bodyDiffers(shown, next, '2026-10-21');
      if (differs) {
        problems.push(`the rotation ${write.requestId} answered the old key with ${differs}`);
      }
    }
    if (write?.write.kind === 'update') {
      const differs = bodyDiffers(write.body, next, write.write.version);
      if (differs) {
        problems.push(`the update ${write.requestId} answered ${differs}`);
      }
    }
    if (write) {
      after.set(write.requestId, next);
    }
    state = next;
    previousAt = at;
    states.push(state);
  }
  for (const field of FIELDS) {
    if (state[field] !== final[field]) {
      problems.push(`the chain ends with ${field} ${state[field]}, the key has ${final[field]}`);
    }
  }
  for (const write of answered) {
    problems.push(...unexplainedWrite(write, eventOf.has(write.requestId), states));
  }
  return problems;
}

/** What does not hold of one write that the chain does not show changing the key. */
function unexplainedWrite(write: AnsweredWrite, hasEvent: boolean, states: readonly KeyState[]): string[] {
  const { requestId } = write;
  const message = (write.body as { error?: { message?: string } }).error?.message ?? '';
  if (write.status === 200) {
    if (hasEvent) {
      return [];
    }
    if (write.write.kind === 'rotate') {
      return [`the rotation ${requestId} was acknowledged without an event`];
    }
    const { patch, version } = write.write;
    // A change that changed nothing: the key was, at some point of the chain, what the write asked for.
    const found = states.some(
      (state) =>
        FIELDS.every((field) => patch[field] === undefined || patch[field] === state[field]) &&
        !(revives(patch) && expiredAt(state, write.answeredAt)) &&
        bodyDiffers(write.body, state, version) === undefined,
    );
    return found
      ? []
      : [`the update ${requestId} was acknowledged without an event, yet the key never was as it asked`];
  }
  if (hasEvent) {
    return [`the refused write ${requestId} has an event`];
  }
  if (write.status !== 400) {
    return [`the write ${requestId} got ${write.status}: ${message}`];
  }
  const refusedState = states.some((state) =>
    write.write.kind === 'rotate'
      ? state.status === 'archived' || expiredAt(state, write.answeredAt)
      : expiredAt(state, write.answeredAt),
  );
  return refusedState ? [] : [`the write ${requestId} was refused (${message}), yet the key never was so`];
}
