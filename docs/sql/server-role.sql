-- A PostgreSQL role for apikeys-server that can serve the API and append to the audit trail, but cannot change or
-- delete an audit event, nor drop the triggers that refuse it (only the owner of a table may). Run it as the owner of
-- the tables (the role that applies the migrations: `apikeys migrate`), after the migrations, in the server's
-- database; give the role a password or another way to log in as your platform requires. See docs/deploy.md.
create role apikeys_server login;
grant usage on schema public to apikeys_server;
-- The server reads organizations, admin keys and verifier keys, and creates, changes and reads API keys.
grant select on organizations, admin_keys, verifier_keys to apikeys_server;
grant select, insert, update on api_keys to apikeys_server;
-- When keys were last used: the servers record it (POST /v1/keys/verify).
grant select, insert, update on api_key_usage to apikeys_server;
-- The index of the permission filter, which triggers rewrite when a key's permissions change.
grant select, insert, delete on api_key_permissions to apikeys_server;
-- The audit trail: append and read only.
grant select, insert on audit_events to apikeys_server;
-- At start the server checks that the database has every migration it knows (and applies none).
grant select on kysely_migration, kysely_migration_lock to apikeys_server;
