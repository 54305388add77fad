import { type Kysely, sql } from 'kysely';
import { identifierType } from '../dialect.js';
import { DEFAULT_ORGANIZATION } from '../organizations.js';

/** Organizations, admin keys, API keys, the indexes that serve every list filter, and the default organization. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const identifier = identifierType(db);
  await db.schema
    .createTable('organizations')
    .addColumn('id', identifier, (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('admin_keys')
    .addColumn('id', identifier, (col) => col.primaryKey())
    .addColumn('organization_id', identifier, (col) => col.notNull().references('organizations.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'text', (col) => col.notNull().unique())
    .addColumn('partial_key_hint', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addCheckConstraint('admin_keys_status_check', sql`status in ('active', 'disabled')`)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', identifier, (col) => col.primaryKey())
    .addColumn('organization_id', identifier, (col) => col.notNull().references('organizations.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('workspace_id', identifier)
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('created_by_id', identifier, (col) => col.notNull())
    .addColumn('created_by_type', 'text', (col) => col.notNull())
    .addColumn('partial_key_hint', 'text')
    .addColumn('secret_hash', 'text', (col) => col.notNull().unique())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addCheckConstraint('api_keys_status_check', sql`status in ('active', 'inactive', 'archived')`)
    .addCheckConstraint('api_keys_created_by_type_check', sql`created_by_type in ('user', 'service_account')`)
    .execute();

  // Keyset pagination walks (created_at, id) within one organization; each filter gets an index led by the
  // organization and ending in the sort key, so every list query is an index range scan that never sorts.
  await db.schema
    .createIndex('api_keys_org_created_idx')
    .on('api_keys')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('api_keys_org_status_created_idx')
    .on('api_keys')
    .columns(['organization_id', 'status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('api_keys_org_workspace_created_idx')
    .on('api_keys')
    .columns(['organization_id', 'workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('api_keys_org_creator_created_idx')
    .on('api_keys')
    .columns(['organization_id', 'created_by_type', 'created_by_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('admin_keys_org_idx').on('admin_keys').column('organization_id').execute();

  await sql`insert into organizations (id, name, created_at)
    values (${DEFAULT_ORGANIZATION.id}, ${DEFAULT_ORGANIZATION.name}, 0)`.execute(db);
}

/** Drops everything the migration created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('admin_keys').execute();
  await db.schema.dropTable('organizations').execute();
}
