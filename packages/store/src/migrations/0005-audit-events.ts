import { type Kysely, sql } from 'kysely';
import { identifierType, isPostgres } from '../dialect.js';

/** The message of the error the database raises on any attempt to change or delete an audit event. */
export const AUDIT_EVENTS_IMMUTABLE = 'audit events are immutable';

/**
 * The audit trail: one row per change, never updated or deleted. The primary key is (organization, id), and IDs
 * sort as events occurred, so the trail of an organization is one range of it, newest first; each filter has an
 * index led by the organization and ending in the ID, so that every page, filtered or not, is a range scan that
 * never sorts. A change keeps `name`, `status` and `expires_at` as they were before it and after it (null before a
 * creation); the fields that differ are what it changed.
 *
 * Both engines refuse to change or delete a row, with triggers (PostgreSQL also refuses TRUNCATE). The owner of the
 * table could drop them: docs/deploy.md shows how to run the server as a role that owns nothing and may only insert
 * and read audit events.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const identifier = identifierType(db);
  const postgres = isPostgres(db);
  await db.schema
    .createTable('audit_events')
    .addColumn('organization_id', identifier, (col) => col.notNull().references('organizations.id'))
    .addColumn('id', identifier, (col) => col.notNull())
    .addColumn('occurred_at', 'bigint', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('actor_type', 'text', (col) => col.notNull())
    .addColumn('actor_id', identifier)
    .addColumn('actor_name', 'text')
    .addColumn('target_type', 'text', (col) => col.notNull())
    .addColumn('target_id', identifier, (col) => col.notNull())
    .addColumn('name_before', 'text')
    .addColumn('name_after', 'text')
    .addColumn('status_before', 'text')
    .addColumn('status_after', 'text')
    .addColumn('expires_at_before', 'bigint')
    .addColumn('expires_at_after', 'bigint')
    .addColumn('related_type', 'text')
    .addColumn('related_id', identifier)
    .addColumn('key_count', 'bigint')
    .addColumn('request_id', 'text')
    .addColumn('client_ip', 'text')
    .addColumn('client_user_agent', 'text')
    .addPrimaryKeyConstraint('audit_events_pkey', ['organization_id', 'id'])
    .addCheckConstraint(
      'audit_events_type_check',
      sql`type in ('api_key.created', 'api_key.updated', 'api_key.rotated', 'api_key.seeded', 'admin_key.created',
        'admin_key.disabled', 'admin_key.enabled', 'organization.created')`,
    )
    .addCheckConstraint(
      'audit_events_actor_check',
      sql`(actor_type = 'admin_key' and actor_id is not null) or (actor_type = 'operator' and actor_id is null)`,
    )
    .addCheckConstraint('audit_events_target_type_check', sql`target_type in ('api_key', 'admin_key', 'organization')`)
    .addCheckConstraint('audit_events_related_check', sql`(related_type is null) = (related_id is null)`)
    .execute();
  for (const column of ['target_id', 'actor_id', 'type']) {
    await db.schema
      .createIndex(`audit_events_org_${column}_idx`)
      .on('audit_events')
      .columns(['organization_id', column, 'id'])
      .execute();
  }

  if (postgres) {
    await sql`create function audit_events_refuse_change() returns trigger language plpgsql as $$
      begin
        raise exception '${sql.raw(AUDIT_EVENTS_IMMUTABLE)}' using errcode = 'insufficient_privilege';
      end $$`.execute(db);
    await sql`create trigger audit_events_immutable before update or delete on audit_events
      for each row execute function audit_events_refuse_change()`.execute(db);
    await sql`create trigger audit_events_no_truncate before truncate on audit_events
      for each statement execute function audit_events_refuse_change()`.execute(db);
  } else {
    for (const action of ['update', 'delete']) {
      await sql`create trigger ${sql.raw(`audit_events_no_${action}`)} before ${sql.raw(action)} on audit_events
        begin select raise(abort, '${sql.raw(AUDIT_EVENTS_IMMUTABLE)}'); end`.execute(db);
    }
  }
}

/** Drops the audit trail (dropping a table is not a change to its rows: the triggers go with it). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  if (isPostgres(db)) {
    await sql`drop function audit_events_refuse_change()`.execute(db);
  }
}
