import type { StoreCore } from '../core/store-core.js';
import type { PreparedQuery } from '../prepared-query.js';
import { newId } from '../random.js';
import type { AdminKeysTable, VerifierKeysTable } from '../schema.js';
import { issueSecret } from '../secrets.js';
import { nowMicros } from '../time.js';
import type { AdminKeyRecord, VerifierKeyRecord } from '../types.js';

/** The columns of a credential, the same in `admin_keys` and `verifier_keys`, its secret's hash last. */
export const CREDENTIAL_KEY_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'partial_key_hint',
  'status',
  'secret_hash',
] as const;

/** A credential row: an admin key's or a verifier key's. */
type CredentialRow = Pick<
  AdminKeysTable & VerifierKeysTable,
  'id' | 'organization_id' | 'name' | 'partial_key_hint' | 'status'
>;

/** An admin key or verifier key row as column values, in the order of `CREDENTIAL_KEY_COLUMNS`. */
export type CredentialKeyValues = [
  id: string,
  organization_id: string,
  name: string,
  partial_key_hint: string,
  status: AdminKeysTable['status'] & VerifierKeysTable['status'],
  secret_hash: string,
];

/** The ID prefix of each kind of credential key. */
const ID_PREFIX = { admin: 'adminkey', verifier: 'verifierkey' } as const;

/**
 * The row of a new active admin key or verifier key of the organization, with a fresh secret: the secret goes back
 * to the caller this once, the row keeps only its hash.
 */
export function newCredentialKeyRow(
  kind: keyof typeof ID_PREFIX,
  input: { organizationId: string; name: string },
): { row: AdminKeysTable & VerifierKeysTable; secret: string } {
  const issued = issueSecret(kind);
  const row = {
    id: newId(ID_PREFIX[kind]),
    organization_id: input.organizationId,
    name: input.name,
    secret_hash: issued.hash,
    partial_key_hint: issued.hint,
    status: 'active' as const,
    created_at: nowMicros(),
  };
  return { row, secret: issued.secret };
}

/** Maps an admin key or verifier key row to its record (the two records have the same fields). */
export function toCredentialKey(row: CredentialRow): AdminKeyRecord & VerifierKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    partialKeyHint: row.partial_key_hint,
    status: row.status,
  };
}

/** The prepared lookup of a key table's row by its secret's hash. */
export function byHash<Table extends 'admin_keys' | 'verifier_keys' | 'api_keys'>(
  core: StoreCore,
  table: Table,
  columns: readonly string[],
): PreparedQuery<'hash'> {
  return core.prepared.get<'hash'>(`${table} by hash:${columns.join()}`, (slot) =>
    core.db
      .selectFrom(table as 'admin_keys')
      .select(columns as unknown as (typeof CREDENTIAL_KEY_COLUMNS)[number][])
      .where('secret_hash', '=', slot('hash')),
  );
}
