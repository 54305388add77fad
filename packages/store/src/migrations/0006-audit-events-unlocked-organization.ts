import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/** The foreign key 0005 gave audit events to their organization, as PostgreSQL names it. */
const ORGANIZATION_FOREIGN_KEY = 'audit_events_organization_id_fkey';

/**
 * PostgreSQL: an audit event no longer references its organization by a foreign key. Checking one locks the
 * organization's row (FOR KEY SHARE) in every transaction that records a change, so that concurrent changes of one
 * organization share that lock through a multixact, and each of them waits for any transaction holding the row FOR
 * UPDATE. The reference holds without it: every event is written by the statement that changes a row of its
 * organization, in the same transaction, and organizations are never deleted (no operation or command does, and the
 * server's role may not: docs/deploy.md).
 *
 * SQLite keeps its foreign key: it locks no row (SQLite has one writer at a time).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table audit_events drop constraint ${sql.ref(ORGANIZATION_FOREIGN_KEY)}`.execute(db);
  }
}

/** Restores the foreign key (every event's organization exists, so it validates). */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table audit_events add constraint ${sql.ref(ORGANIZATION_FOREIGN_KEY)}
      foreign key (organization_id) references organizations (id)`.execute(db);
  }
}
