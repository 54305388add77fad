import { OPERATOR_CHANGES } from '../audit-trail/audit-events.js';
import { recordCreation, recordEvent, recordedFields } from '../audit-trail/record-event.js';
import type { CoreCalls } from '../core/core-calls.js';
import { readByIds } from '../core/id-batches.js';
import type { StoreCore } from '../core/store-core.js';
import { isPostgres } from '../dialect.js';
import { hashesEqual, type SecretKind } from '../secrets.js';
import type {
  AdminKeyRecord,
  AdminKeyStatus,
  CreatedAdminKey,
  CreatedVerifierKey,
  Credential,
  CredentialRef,
  CredentialStore,
  VerifierKeyRecord,
  VerifierKeyStatus,
} from '../types.js';
import {
  byHash,
  CREDENTIAL_KEY_COLUMNS,
  type CredentialKeyValues,
  newCredentialKeyRow,
  toCredentialKey,
} from './credential-rows.js';

/** Creates an active admin key of the organization, and records its creation. */
export async function createAdminKey(
  core: StoreCore,
  input: { organizationId: string; name: string },
  context = OPERATOR_CHANGES,
): Promise<CreatedAdminKey> {
  const { row, secret } = newCredentialKeyRow('admin', input);
  const adminKey = toCredentialKey(row);
  return core.inTransaction(async (trx) => {
    await trx.db.insertInto('admin_keys').values(row).execute();
    await recordCreation(
      trx,
      {
        organizationId: input.organizationId,
        target: { type: 'admin_key', id: row.id },
        after: recordedFields(adminKey),
      },
      context,
    );
    return { adminKey, secret };
  });
}

/** Enables or disables an admin key, under its lock; a status it already has changes and records nothing. */
export async function setAdminKeyStatus(
  core: StoreCore,
  id: string,
  status: AdminKeyStatus,
  context = OPERATOR_CHANGES,
): Promise<AdminKeyRecord | undefined> {
  return core.inTransaction(async (trx) => {
    let read = trx.db.selectFrom('admin_keys').select(CREDENTIAL_KEY_COLUMNS).where('id', '=', id);
    if (isPostgres(trx.db)) {
      read = read.forUpdate();
    }
    const found = await read.executeTakeFirst();
    if (!found || found.status === status) {
      return found && toCredentialKey(found);
    }
    const row = await trx.db
      .updateTable('admin_keys')
      .set({ status })
      .where('id', '=', id)
      .returning(CREDENTIAL_KEY_COLUMNS)
      .executeTakeFirstOrThrow();
    const adminKey = toCredentialKey(row);
    trx.keyChanged({ kind: 'admin_key', id, organizationId: adminKey.organizationId, change: 'updated' });
    await recordEvent(
      trx,
      {
        organizationId: adminKey.organizationId,
        type: status === 'disabled' ? 'admin_key.disabled' : 'admin_key.enabled',
        target: { type: 'admin_key', id },
        before: recordedFields(toCredentialKey(found)),
        after: recordedFields(adminKey),
      },
      context,
    );
    return adminKey;
  });
}

/** The number of active admin keys, in every organization. */
export async function countActiveAdminKeys(core: StoreCore): Promise<number> {
  const { count } = await core.db
    .selectFrom('admin_keys')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** What a secret hash belongs to (see `CredentialStore.findCredential`). */
export async function findCredential(core: StoreCore, secretHash: string, kind?: SecretKind): Promise<Credential> {
  const lookups: Record<SecretKind, () => Promise<Credential | undefined>> = {
    admin: async () => {
      const adminKey = await credentialKeyByHash(core, 'admin_keys', secretHash);
      return adminKey && { kind: 'admin_key', adminKey };
    },
    verifier: async () => {
      const verifierKey = await credentialKeyByHash(core, 'verifier_keys', secretHash);
      return verifierKey && { kind: 'verifier_key', verifierKey };
    },
    apiKey: async () => {
      const [row] = await core.run(byHash(core, 'api_keys', ['organization_id', 'secret_hash'] as const), {
        hash: secretHash,
      });
      if (!row) {
        return undefined;
      }
      const [organizationId, storedHash] = row as [string, string];
      return hashesEqual(storedHash, secretHash) ? { kind: 'api_key', organizationId } : undefined;
    },
  };
  for (const lookup of kind ? [lookups[kind]] : Object.values(lookups)) {
    const credential = await lookup();
    if (credential) {
      return credential;
    }
  }
  return { kind: 'unknown' };
}

/** The admin key or verifier key (the tables have the same columns) whose secret has this hash. */
async function credentialKeyByHash(
  core: StoreCore,
  table: 'admin_keys' | 'verifier_keys',
  secretHash: string,
): Promise<(AdminKeyRecord & VerifierKeyRecord) | undefined> {
  const [row] = await core.run(byHash(core, table, CREDENTIAL_KEY_COLUMNS), { hash: secretHash });
  if (!row) {
    return undefined;
  }
  const [id, organization_id, name, partial_key_hint, status, storedHash] = row as CredentialKeyValues;
  return hashesEqual(storedHash, secretHash)
    ? toCredentialKey({ id, organization_id, name, partial_key_hint, status })
    : undefined;
}

/** Creates an active verifier key of the organization (not audited). */
export async function createVerifierKey(
  core: StoreCore,
  input: { organizationId: string; name: string },
): Promise<CreatedVerifierKey> {
  const { row, secret } = newCredentialKeyRow('verifier', input);
  await core.db.insertInto('verifier_keys').values(row).execute();
  return { verifierKey: toCredentialKey(row), secret };
}

/** Enables or disables a verifier key (not audited). */
export async function setVerifierKeyStatus(
  core: StoreCore,
  id: string,
  status: VerifierKeyStatus,
): Promise<VerifierKeyRecord | undefined> {
  const row = await core.db
    .updateTable('verifier_keys')
    .set({ status })
    .where('id', '=', id)
    .returning(['id', 'organization_id', 'name', 'partial_key_hint', 'status'])
    .executeTakeFirst();
  if (!row) {
    return undefined;
  }
  const verifierKey = toCredentialKey(row);
  core.keyChanged({ kind: 'verifier_key', id, organizationId: verifierKey.organizationId, change: 'updated' });
  return verifierKey;
}

/** Which of `credentials` are active (see `CredentialStore.findActiveCredentials`). */
export async function findActiveCredentials(
  core: StoreCore,
  credentials: readonly CredentialRef[],
): Promise<CredentialRef[]> {
  const active: CredentialRef[] = [];
  for (const [kind, table] of [
    ['admin_key', 'admin_keys'],
    ['verifier_key', 'verifier_keys'],
  ] as const) {
    const ids = credentials.filter((credential) => credential.kind === kind).map(({ id }) => id);
    const rows = await readByIds(ids, (batch) =>
      core.db.selectFrom(table).select('id').where('id', 'in', batch).where('status', '=', 'active').execute(),
    );
    active.push(...rows.map(({ id }) => ({ kind, id })));
  }
  return active;
}

/** The calls of `CredentialStore`. */
export const CREDENTIAL_CALLS = {
  createAdminKey,
  setAdminKeyStatus,
  countActiveAdminKeys,
  findCredential,
  findActiveCredentials,
  createVerifierKey,
  setVerifierKeyStatus,
} satisfies CoreCalls<CredentialStore>;
