import { onPostgres } from '@apikeys/server/testing';
import { parseDatabaseUrl } from '@apikeys/store';
import Database from 'better-sqlite3';
import type { Engine } from './seed.js';

/** A database of the bench: its engine and the DATABASE_URL its servers open. */
export interface BenchDatabase {
  engine: Engine;
  databaseUrl: string;
}

/** Undoes a change to a bench database; rejects when the change did not hold while it was in place. */
export type SwitchBack = () => Promise<void>;

const TRIGGER = 'bench_audit_trail_off';

/** The bench's statements: SQLite drops an insert by `raise(ignore)`, PostgreSQL when its trigger returns NULL. */
const STATEMENTS: Record<Engine, { switchOff: string[]; switchOn: string[] }> = {
  sqlite: {
    switchOff: [`create trigger ${TRIGGER} before insert on audit_events begin select raise(ignore); end`],
    switchOn: [`drop trigger if exists ${TRIGGER}`],
  },
  postgres: {
    switchOff: [
      `create function ${TRIGGER}() returns trigger language plpgsql as $$ begin return null; end $$`,
      `create trigger ${TRIGGER} before insert on audit_events for each row execute function ${TRIGGER}()`,
    ],
    switchOn: [`drop trigger if exists ${TRIGGER} on audit_events`, `drop function if exists ${TRIGGER}()`],
  },
};

// The servers hold the database open meanwhile: wait for an idle moment rather than fail at once.
const LOCK_WAIT_MS = 10_000;

/** Runs statements on a bench database, in one transaction, and returns the number of audit events after them. */
async function execute({ engine, databaseUrl }: BenchDatabase, statements: readonly string[]): Promise<number> {
  const countEvents = 'select count(*) as events from audit_events';
  const location = parseDatabaseUrl(databaseUrl);
  if (location.kind === 'sqlite') {
    const db = new Database(location.path, { timeout: LOCK_WAIT_MS });
    try {
      return db.transaction(() => {
        for (const statement of statements) {
          db.exec(statement);
        }
        return (db.prepare(countEvents).get() as { events: number }).events;
      })();
    } finally {
      db.close();
    }
  }
  if (engine !== 'postgres') {
    throw new Error(`a ${engine} bench database with a PostgreSQL URL`);
  }
  return onPostgres(location.url, async (client) => {
    await client.query('begin');
    await client.query(`set local lock_timeout = ${LOCK_WAIT_MS}`);
    for (const statement of statements) {
      await client.query(statement);
    }
    const { rows } = await client.query<{ events: string }>(countEvents);
    await client.query('commit');
    return Number(rows[0]?.events);
  });
}

/**
 * The audit trail off, on the bench's side: a trigger on the bench's database drops every insert into
 * `audit_events`, so that the server, unchanged, records no event (the `no-audit` variant). Every statement of an
 * update still runs, the event's insert included: what the variant saves is writing the event's row, its index
 * entries and their WAL. The returned function drops the trigger, and rejects when events were recorded meanwhile.
 */
export async function switchAuditTrailOff(database: BenchDatabase): Promise<SwitchBack> {
  const before = await execute(database, STATEMENTS[database.engine].switchOff);
  return async () => {
    const after = await execute(database, STATEMENTS[database.engine].switchOn);
    if (after !== before) {
      throw new Error(`${after - before} audit events were recorded while the audit trail was off`);
    }
  };
}
