/**
 * The rules the spec states in prose rather than in schemas, as the oracle applies them to a request its schemas
 * accept: which IDs name the caller's items, cursors, expiries that must lie in the future, the scope a create
 * needs a principal for, what an expired key still allows, which keys a rotation refuses, and the verdict of a
 * verification. Each refers to the section of the spec's description that states it.
 */
import {
  heldPermissions,
  metadataProblem,
  type PermissionQuery,
  PermissionQueryError,
  parsePermissionQuery,
  satisfiesPermissionQuery,
} from '@apikeys/permissions';
import { instantOf, latestOf } from './datetimes.js';
import { type Caller, invalid as reasonOf, type Violation } from './input-checks.js';
import {
  type Bindings,
  ID_ORGANIZATIONS,
  ID_PLACEHOLDERS,
  type IdPlaceholder,
  KEYS,
  type KeyIdPlaceholder,
  type KeyState,
  placeholderOf,
  SECRET_PLACEHOLDERS,
  SECRETS,
} from './placeholders.js';
import { examplePrefix } from './schema-values.js';
import type { OperationModel, ParameterModel } from './spec-model.js';

/** A reason the prose gives: its text names no value, so that the statistics can count it. */
function invalid(reason: string, statuses: number[], prefixes: string[]): Violation {
  return { ...reasonOf(reason, statuses, prefixes), rule: true };
}

/** How close to now an expiry may be and still go either way: the server reads its clock while the request runs. */
const NOW_MARGIN_MICROS = 30_000_000n;

/** A request the schemas accept, as the rules read it. */
export interface SemanticInput {
  operation: OperationModel;
  caller: Caller;
  /** Path parameters, decoded. */
  path: Readonly<Record<string, string>>;
  /** Query parameters, decoded, without the empty values that mean absent. */
  query: ReadonlyMap<string, readonly string[]>;
  body: unknown;
  bindings: Bindings;
  /** Now, in microseconds since the epoch, when the request is sent. */
  now: bigint;
}

/** The placeholder of the fixture's ID `value`, when it is one of the caller's items of the parameter's kind. */
export function callerItem(
  parameter: ParameterModel,
  value: string,
  caller: Caller,
  bindings: Bindings,
): IdPlaceholder | undefined {
  const prefix = examplePrefix(parameter.example ?? parameter.schema.example);
  const found = placeholderOf(value, ID_PLACEHOLDERS, bindings);
  return found !== undefined &&
    prefix !== undefined &&
    value.startsWith(prefix) &&
    ID_ORGANIZATIONS[found] === caller.organization
    ? found
    : undefined;
}

/** The state of the caller's fixture key that an ID names, if it is one. */
function keyState(id: IdPlaceholder | undefined): KeyState | undefined {
  return id !== undefined && id in KEYS ? KEYS[id as KeyIdPlaceholder].state : undefined;
}

/** Path IDs (404: "A key of another organization is indistinguishable from a key that does not exist"). */
function pathReasons(input: SemanticInput): Violation[] {
  return input.operation.parameters
    .filter((parameter) => parameter.in === 'path')
    .flatMap((parameter) => {
      const value = input.path[parameter.name] ?? '';
      return callerItem(parameter, value, input.caller, input.bindings)
        ? []
        : [invalid(`path ${parameter.name} names no item of the caller's`, [404], [parameter.name])];
    });
}

/** What an ID that names none of the caller's items of the expected kind is, as a reason may say it. */
function describeId(value: string, input: SemanticInput): string {
  const found = placeholderOf(value, ID_PLACEHOLDERS, input.bindings);
  if (found === undefined) {
    return 'no item';
  }
  return ID_ORGANIZATIONS[found] === input.caller.organization
    ? "another kind of the caller's items"
    : "another organization's item";
}

/** Cursors ("Passing both ... or a cursor that names no ... of the organization, is a 400"). */
function cursorReasons(input: SemanticInput): Violation[] {
  const cursors = input.operation.parameters.filter(
    (parameter) => parameter.in === 'query' && parameter.description?.startsWith('Cursor:'),
  );
  const sent = cursors.filter((cursor) => input.query.has(cursor.name));
  const found: Violation[] = [];
  if (sent.length > 1) {
    found.push(
      invalid(
        'both cursors',
        [400],
        sent.map((cursor) => cursor.name),
      ),
    );
  }
  for (const cursor of sent) {
    const [value = ''] = input.query.get(cursor.name) ?? [];
    if (!callerItem(cursor, value, input.caller, input.bindings)) {
      const what = describeId(value, input);
      found.push(invalid(`cursor ${cursor.name} names ${what}`, [400], [cursor.name]));
    }
  }
  return found;
}

/** Expiries ("An `expires_at` ... must lie in the future, and no later than" `x-latest`), or too close to tell. */
function expiryReasons(input: SemanticInput): { violations: Violation[]; possible: Violation[] } {
  const found = { violations: [] as Violation[], possible: [] as Violation[] };
  const body = input.body as Record<string, unknown> | null;
  const properties = input.operation.body?.schema.properties ?? {};
  for (const [field, schema] of Object.entries(properties)) {
    const latest = latestOf(schema);
    const value = body?.[field];
    if (latest === undefined || typeof value !== 'string') {
      continue;
    }
    const instant = instantOf(value);
    const last = instantOf(latest);
    if (instant === undefined || last === undefined) {
      continue;
    }
    if (instant > last) {
      found.violations.push(invalid(`${field} later than ${latest}`, [400], [field]));
    } else if (instant <= input.now - NOW_MARGIN_MICROS) {
      found.violations.push(invalid(`${field} in the past`, [400], [field]));
    } else if (instant <= input.now + NOW_MARGIN_MICROS) {
      found.possible.push(invalid(`${field} within moments of now`, [400], [field]));
    }
  }
  return found;
}

/** The rules of single operations, from the spec's Expiry and "Creating and rotating keys" sections. */
function operationReasons(input: SemanticInput): Violation[] {
  const body = (input.body ?? {}) as Record<string, unknown>;
  const idParameter = input.operation.parameters.find((parameter) => parameter.in === 'path');
  const id = idParameter && callerItem(idParameter, input.path[idParameter.name] ?? '', input.caller, input.bindings);
  const state = keyState(id);
  // `KeyMetadata`: "at most `x-max-serialized-bytes` bytes ... and at most `x-max-depth` levels deep".
  const metadata =
    body.metadata !== undefined && body.metadata !== null && metadataProblem(body.metadata) !== undefined
      ? [invalid('metadata beyond its size or depth', [400], ['metadata'])]
      : [];
  switch (input.operation.operationId) {
    case 'createApiKey':
      // "`workspace_id: null` gives the key organization scope (no workspace), which only a key bound to a
      // `principal` may have."
      return body.workspace_id === null && (body.principal ?? null) === null
        ? [...metadata, invalid('organization scope without a principal', [400], ['workspace_id'])]
        : metadata;
    case 'updateApiKey': {
      // "An expired key is otherwise final: renaming or archiving it works, but an update that sets its status to
      // `active` or `inactive`, or changes its `expires_at`, is a `400` that changes nothing."
      const revives = body.status === 'active' || body.status === 'inactive' || 'expires_at' in body;
      return state === 'expired' && revives
        ? [...metadata, invalid('an update that revives an expired key', [400], ['status', 'expires_at'])]
        : metadata;
    }
    case 'verifyApiKey':
      // `PermissionQuery`: "A malformed query is a `400` whose message names the position".
      return typeof body.permissions === 'string' && requirementOf(body.permissions) === undefined
        ? [invalid('a malformed permission requirement', [400], ['permissions'])]
        : [];
    case 'rotateApiKey':
      // "An archived or expired key cannot be rotated (`400`)."
      return state === 'archived' || state === 'expired'
        ? [invalid(`a rotation of an ${state} key`, [400], [idParameter?.name ?? 'path'])]
        : [];
    default:
      return [];
  }
}

/** The reasons the prose gives to refuse a request that every schema accepts, and those it leaves open. */
export function semanticReasons(input: SemanticInput): { violations: Violation[]; possible: Violation[] } {
  const expiry = expiryReasons(input);
  return {
    violations: [...pathReasons(input), ...cursorReasons(input), ...expiry.violations, ...operationReasons(input)],
    possible: expiry.possible,
  };
}

/** The verification codes of each state a found key is in (the spec's Verification section). */
const CODES: Readonly<Record<KeyState, string>> = {
  active: 'VALID',
  inactive: 'INACTIVE',
  archived: 'ARCHIVED',
  expired: 'EXPIRED',
};

/** What a verification must answer: the code, and the key it names (none for `NOT_FOUND`). */
export interface Verdict {
  code: string;
  key?: KeyIdPlaceholder;
}

/** A permission requirement, parsed; undefined when the evaluator refuses it. */
function requirementOf(text: string): PermissionQuery | undefined {
  try {
    return parsePermissionQuery(text);
  } catch (error) {
    if (error instanceof PermissionQueryError) {
      return undefined;
    }
    throw error;
  }
}

/** The permissions of the fixture's keys: none (the fuzzer's state puts them back after every request). */
const FIXTURE_KEY_PERMISSIONS = heldPermissions([]);

/**
 * The verdict for a secret: the state of the caller's key whose secret it is exactly; `NOT_FOUND` for anything
 * else (another organization's key, an admin or verifier key, a mistyped or unknown secret). With a permission
 * requirement (`permissions`), an active key that does not satisfy it is `INSUFFICIENT_PERMISSIONS`.
 */
export function verdictFor(secret: string, caller: Caller, bindings: Bindings, permissions?: unknown): Verdict {
  const placeholder = placeholderOf(secret, SECRET_PLACEHOLDERS, bindings);
  const key = placeholder === undefined ? undefined : SECRETS[placeholder].key;
  if (key === undefined || KEYS[key].organization !== caller.organization) {
    return { code: 'NOT_FOUND' };
  }
  const requirement = typeof permissions === 'string' ? requirementOf(permissions) : undefined;
  if (
    KEYS[key].state === 'active' &&
    requirement !== undefined &&
    !satisfiesPermissionQuery(requirement, FIXTURE_KEY_PERMISSIONS)
  ) {
    return { code: 'INSUFFICIENT_PERMISSIONS', key };
  }
  return { code: CODES[KEYS[key].state], key };
}
