import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * The latest expiry the API accepts, 2199-12-31T23:59:59.999999Z, in microseconds (the spec's `ExpiresAt.x-latest`,
 * written here as it was when this migration shipped).
 */
const LATEST_EXPIRY_MICROS = 7_258_118_399_999_999;

// As migration 0005 words it: the SQLite triggers this migration sets aside must come back as they were.
const AUDIT_EVENTS_IMMUTABLE = 'audit events are immutable';

/**
 * Brings every stored expiry within the range the API accepts. Before that range existed, a create or an update could
 * store an expiry past it (up to the year 9999), whose microseconds a JavaScript number does not hold: every read of
 * such a key, and of the audit events of the change, failed. Those expiries become the latest one the API accepts,
 * which is as far from any reader's lifetime; they were already rounded when stored, so nothing exact is lost.
 *
 * The audit trail is immutable, and its triggers refuse every change: they are set aside in this migration's
 * transaction, only when an event holds such an expiry, and are back before it commits.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const latest = sql.lit(LATEST_EXPIRY_MICROS);
  await sql`update api_keys set expires_at = ${latest} where expires_at > ${latest}`.execute(db);
  const { rows } = await sql`select 1 as found from audit_events
    where expires_at_before > ${latest} or expires_at_after > ${latest} limit 1`.execute(db);
  if (rows.length === 0) {
    return;
  }
  await allowingAuditEventUpdates(db, async () => {
    for (const column of ['expires_at_before', 'expires_at_after']) {
      await sql`update audit_events set ${sql.ref(column)} = ${latest} where ${sql.ref(column)} > ${latest}`.execute(
        db,
      );
    }
  });
}

/** Nothing to undo: the expiries it changed were past the range, and already rounded when they were stored. */
export async function down(): Promise<void> {}

/** Runs `work` with the audit trail's refusal of updates set aside (within the migration's transaction). */
async function allowingAuditEventUpdates(db: Kysely<unknown>, work: () => Promise<void>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table audit_events disable trigger audit_events_immutable`.execute(db);
    await work();
    await sql`alter table audit_events enable trigger audit_events_immutable`.execute(db);
    return;
  }
  await sql`drop trigger audit_events_no_update`.execute(db);
  await work();
  await sql`create trigger audit_events_no_update before update on audit_events
    begin select raise(abort, '${sql.raw(AUDIT_EVENTS_IMMUTABLE)}'); end`.execute(db);
}
