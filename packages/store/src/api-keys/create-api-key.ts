import type { InsertObject } from 'kysely';
import { OPERATOR_CHANGES } from '../audit-trail/audit-events.js';
import { type Creation, recordCreation, recordEvent, recordedFields } from '../audit-trail/record-event.js';
import type { StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import { newId } from '../random.js';
import type { DatabaseSchema } from '../schema.js';
import { issueSecret } from '../secrets.js';
import { effectiveStatus } from '../statuses.js';
import { nowMicros } from '../time.js';
import type { ApiKeyRecord, CreatedApiKey, NewApiKey, RotateApiKeyInput, RotateApiKeyResult } from '../types.js';
import { API_KEY_SELECTION, toApiKey } from './api-key-rows.js';

/** Creates a key and records its creation, in one transaction. */
export async function createApiKey(
  core: StoreCore,
  input: NewApiKey,
  context = OPERATOR_CHANGES,
): Promise<CreatedApiKey> {
  const { organizationId, scope = 'workspace', workspaceId, principal } = input;
  if (scope === 'organization') {
    if (!principal || workspaceId != null) {
      throw new TypeError('a key with organization scope needs a principal and takes no workspace');
    }
  } else if (scope !== 'workspace') {
    throw new TypeError(`unknown scope: ${String(scope)}`);
  }
  const values = {
    organization_id: organizationId,
    name: input.name,
    // Null: the default workspace with `workspace` scope, no workspace with `organization` scope.
    workspace_id: workspaceId ?? null,
    scope,
    created_by_id: input.createdBy.id,
    created_by_type: input.createdBy.type,
    status: input.status ?? 'active',
    expires_at: input.expiresAt ?? null,
    principal_type: principal?.type ?? null,
    principal_id: principal?.id ?? null,
    permissions: JSON.stringify(input.permissions ?? []),
    metadata: JSON.stringify(input.metadata ?? {}),
  };
  return core.inTransaction(async (trx) => {
    const created = await insertApiKey(trx, values);
    await recordCreation(trx, keyCreation(organizationId, created.apiKey), context);
    return created;
  });
}

/** Inserts a key with a new ID and secret, created now. */
async function insertApiKey(
  core: StoreCore,
  values: Omit<
    InsertObject<DatabaseSchema, 'api_keys'>,
    'id' | 'created_at' | 'partial_key_hint' | 'secret_hash' | 'updated_at'
  >,
): Promise<CreatedApiKey> {
  const issued = issueSecret('apiKey');
  const now = nowMicros();
  const row = await core.db
    .insertInto('api_keys')
    .values({
      ...values,
      id: newId('apikey'),
      created_at: now,
      partial_key_hint: issued.hint,
      secret_hash: issued.hash,
      updated_at: now,
    })
    .returning(API_KEY_SELECTION)
    .executeTakeFirstOrThrow();
  return { apiKey: toApiKey(row), secret: issued.secret };
}

/** Replaces a key with a new one (see `ApiKeyStore.rotateApiKey`), under the old key's lock. */
export async function rotateApiKey(
  core: StoreCore,
  input: RotateApiKeyInput,
  context = OPERATOR_CHANGES,
): Promise<RotateApiKeyResult> {
  const { organizationId, id, gracePeriodMicros } = input;
  if (!Number.isSafeInteger(gracePeriodMicros) || gracePeriodMicros < 0) {
    throw new TypeError('the grace period must be a whole number of microseconds, zero or more');
  }
  if (!core.db.isTransaction) {
    return core.inTransaction((trx) => rotateApiKey(trx, input, context));
  }
  let read = core.db
    .selectFrom('api_keys')
    .select(API_KEY_SELECTION)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id);
  if (isPostgres(core.db)) {
    // A second rotation of the key waits here for the first to commit, then sees the expiry it set. (SQLite runs
    // one transaction at a time per connection, and one whose snapshot another connection has written to since
    // fails to write.)
    read = read.forUpdate();
  }
  const row = await read.executeTakeFirst();
  if (!row) {
    return { kind: 'not_found' };
  }
  const key = toApiKey(row);
  const expiresAt = key.expiresAt ?? null;
  // Read under the lock, so that a rotation or update that waited for another one is later than it.
  const now = await core.currentTime();
  const status = effectiveStatus(key, now);
  if (status === 'archived' || status === 'expired') {
    return { kind: 'not_rotatable', key, status };
  }
  const created = await insertApiKey(core, {
    organization_id: organizationId,
    name: key.name,
    workspace_id: key.workspaceId,
    scope: key.scope ?? 'workspace',
    created_by_id: input.createdBy.id,
    created_by_type: input.createdBy.type,
    status: 'active',
    expires_at: expiresAt,
    principal_type: key.principal?.type ?? null,
    principal_id: key.principal?.id ?? null,
    permissions: JSON.stringify(key.permissions ?? []),
    metadata: JSON.stringify(key.metadata ?? {}),
  });
  const graceEnd = now + gracePeriodMicros;
  const previous = await core.db
    .updateTable('api_keys')
    .set({
      expires_at: expiresAt === null ? graceEnd : Math.min(expiresAt, graceEnd),
      updated_at: nowMicros(),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .returning(API_KEY_SELECTION)
    .executeTakeFirstOrThrow()
    .then(toApiKey);
  await recordCreation(core, keyCreation(organizationId, created.apiKey, key), context);
  await recordEvent(
    core,
    {
      organizationId,
      type: 'api_key.rotated',
      target: { type: 'api_key', id },
      before: recordedFields(key),
      after: recordedFields(previous),
      related: { type: 'api_key', id: created.apiKey.id },
    },
    context,
  );
  core.keyChanged({ kind: 'api_key', id, organizationId, change: 'rotated' });
  return { kind: 'rotated', created, previous, rotatedAt: now };
}

/** The creation of a key; `replaces` is the key a rotation replaces with it. */
function keyCreation(organizationId: string, key: ApiKeyRecord, replaces?: ApiKeyRecord): Creation {
  const related = replaces && { type: 'api_key' as const, id: replaces.id };
  return { organizationId, target: { type: 'api_key', id: key.id }, after: recordedFields(key), related };
}
