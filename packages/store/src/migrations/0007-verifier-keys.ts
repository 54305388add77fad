import { type Kysely, sql } from 'kysely';
import { identifierType } from '../dialect.js';

/**
 * Verifier keys: credentials of an organization that may verify API keys' secrets and do nothing else (the
 * least privilege a gateway needs). Stored like admin keys: the SHA-256 of the secret, never the secret.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const identifier = identifierType(db);
  await db.schema
    .createTable('verifier_keys')
    .addColumn('id', identifier, (col) => col.primaryKey())
    .addColumn('organization_id', identifier, (col) => col.notNull().references('organizations.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'text', (col) => col.notNull().unique())
    .addColumn('partial_key_hint', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addCheckConstraint('verifier_keys_status_check', sql`status in ('active', 'disabled')`)
    .execute();
  await db.schema.createIndex('verifier_keys_org_idx').on('verifier_keys').column('organization_id').execute();
}

/** Drops the verifier keys: their secrets stop working. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('verifier_keys').execute();
}
