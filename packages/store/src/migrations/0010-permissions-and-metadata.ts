import { type Kysely, sql } from 'kysely';
import { identifierType, isPostgres } from '../dialect.js';

/**
 * A key's permissions and metadata, and the index behind the `permission` filter of a list.
 *
 * `api_keys.permissions` holds the key's permission names as a JSON array (in the order given), and
 * `api_keys.metadata` its metadata as a JSON object, both as the text the store wrote: the server never interprets
 * the metadata, and returns what it was given. List pages read them by primary key for each key of the page (as the
 * key's use), so that the covering list indexes stay as narrow as they were.
 *
 * `api_key_permissions` has a row per permission a key holds, ordered as a list page is: a `permission` filter reads
 * it in page order for each name that grants the one asked for (the name itself and the wildcards over it). Triggers
 * keep it in step with `api_keys.permissions` on every insert and every change of that column, whoever writes it (the
 * API, a rotation, the operator CLI), in the writing statement's transaction.
 *
 * `audit_events` records both fields before and after a change, as JSON text, null where the event has no value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const identifier = identifierType(db);
  await db.schema
    .alterTable('api_keys')
    .addColumn('permissions', 'text', (col) => col.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('metadata', 'text', (col) => col.notNull().defaultTo('{}'))
    .execute();
  for (const column of ['permissions_before', 'permissions_after', 'metadata_before', 'metadata_after']) {
    await db.schema.alterTable('audit_events').addColumn(column, 'text').execute();
  }

  let table = db.schema
    .createTable('api_key_permissions')
    .addColumn('organization_id', identifier, (col) => col.notNull())
    .addColumn('permission', identifier, (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('api_key_id', identifier, (col) => col.notNull())
    .addPrimaryKeyConstraint('api_key_permissions_pkey', ['organization_id', 'permission', 'created_at', 'api_key_id']);
  if (!isPostgres(db)) {
    // Read only through its primary key: stored in that b-tree, with no rowid table beside it.
    table = table.modifyEnd(sql`without rowid`);
  }
  await table.execute();

  if (isPostgres(db)) {
    await sql`create function api_keys_index_permissions() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' then
          delete from api_key_permissions
          where organization_id = old.organization_id and created_at = old.created_at and api_key_id = old.id
            and permission in (select jsonb_array_elements_text(old.permissions::jsonb));
        end if;
        insert into api_key_permissions (organization_id, permission, created_at, api_key_id)
        select new.organization_id, name, new.created_at, new.id
        from jsonb_array_elements_text(new.permissions::jsonb) as name;
        return null;
      end $$`.execute(db);
    await sql`create trigger api_keys_permissions_inserted after insert on api_keys
      for each row when (new.permissions <> '[]') execute function api_keys_index_permissions()`.execute(db);
    await sql`create trigger api_keys_permissions_updated after update of permissions on api_keys
      for each row when (new.permissions is distinct from old.permissions)
      execute function api_keys_index_permissions()`.execute(db);
    return;
  }
  const insertNew = sql`insert into api_key_permissions (organization_id, permission, created_at, api_key_id)
    select new.organization_id, value, new.created_at, new.id from json_each(new.permissions);`;
  await sql`create trigger api_keys_permissions_inserted after insert on api_keys
    when new.permissions <> '[]'
    begin ${insertNew} end`.execute(db);
  await sql`create trigger api_keys_permissions_updated after update of permissions on api_keys
    when new.permissions is not old.permissions
    begin
      delete from api_key_permissions
      where organization_id = old.organization_id and created_at = old.created_at and api_key_id = old.id
        and permission in (select value from json_each(old.permissions));
      ${insertNew}
    end`.execute(db);
}

/** Drops the permissions index, its triggers and the new columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger api_keys_permissions_inserted on api_keys`.execute(db);
    await sql`drop trigger api_keys_permissions_updated on api_keys`.execute(db);
    await sql`drop function api_keys_index_permissions()`.execute(db);
  } else {
    await sql`drop trigger api_keys_permissions_inserted`.execute(db);
    await sql`drop trigger api_keys_permissions_updated`.execute(db);
  }
  await db.schema.dropTable('api_key_permissions').execute();
  for (const column of ['permissions_before', 'permissions_after', 'metadata_before', 'metadata_after']) {
    await db.schema.alterTable('audit_events').dropColumn(column).execute();
  }
  await db.schema.alterTable('api_keys').dropColumn('metadata').execute();
  await db.schema.alterTable('api_keys').dropColumn('permissions').execute();
}
