import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiKey, LATEST_API_VERSION, SchemasOf } from '@apikeys/api-types';
import { toApiKeyJson, toKeyVerificationJson } from '@apikeys/server/serializers';
import { databaseUrl, onPostgres } from '@apikeys/server/testing';
import {
  type ApiKeyRecord,
  DEFAULT_ORGANIZATION,
  nowMicros,
  type OrganizationRecord,
  openMigratedStore,
  parseDatabaseUrl,
  type Store,
} from '@apikeys/store';
import { seedApiKeys, seedAuditEvents } from '@apikeys/store/seeding';
import Database from 'better-sqlite3';

/** Engines the suite runs the server on. */
export type Engine = 'sqlite' | 'postgres';

/** An audit event sampled from a seeded trail: its ID is a cursor; its target, actor and time are filters. */
export interface SampledEvent {
  id: string;
  targetId: string;
  /** Null for an operator's change (seeding itself records one or two). */
  actorId: string | null;
  /** Microseconds since the epoch. */
  occurredAt: number;
}

/** What the scenarios' requests are built from, sampled uniformly over a seeded database, in random order. */
export interface Samples {
  /** API key IDs: cursors and keys to read or update. */
  keyIds: string[];
  /** Audit events over the whole trail. */
  events: SampledEvent[];
  /** Secrets of active keys (`KnownKeys`), for verification; empty unless the database has them. */
  secrets: string[];
}

/** A verification as the latest API version answers it. */
export type KeyVerification = SchemasOf<typeof LATEST_API_VERSION>['KeyVerification'];

/** Active keys created with secrets the bench knows (seeded keys have none), and what verifying each answers. */
export interface KnownKeys {
  keys: { secret: string; verification: KeyVerification }[];
  /** Wall-clock seconds creating them took. */
  seconds: number;
}

/** A seeded database, ready for a server to open. */
export interface SeededDatabase {
  engine: Engine;
  keys: number;
  /** Audit events seeded besides the keys' own (as many as keys). */
  events: number;
  databaseUrl: string;
  /** The secret of an admin key of the default organization, for `x-api-key`. */
  adminSecret: string;
  /** Wall-clock seconds `seedApiKeys` took. */
  seedSeconds: number;
  /** Wall-clock seconds `seedAuditEvents` took. */
  eventSeedSeconds: number;
  /** Keys and events for the scenarios' requests. */
  samples: Samples;
  /** The first 1000 keys as the API lists them, for the references to serve. */
  firstItems: ApiKey[];
  /** Deletes the database. */
  drop(): Promise<void>;
}

/** The database the suite creates on the PostgreSQL server for `keys` keys, and drops afterwards. */
export function postgresBenchDatabase(keys: number): string {
  return `apikeys_bench_${keys}`;
}

const SAMPLE_SIZE = 2000;
const SAMPLE_SQL = 'select id from api_keys where organization_id = $1 order by random() limit $2';
const SAMPLE_EVENTS_SQL =
  'select id, target_id, actor_id, occurred_at from audit_events where organization_id = $1 order by random() limit $2';

/** An `audit_events` row as `SAMPLE_EVENTS_SQL` returns it (PostgreSQL returns a bigint as a string). */
interface SampledEventRow {
  id: string;
  target_id: string;
  actor_id: string | null;
  occurred_at: number | string;
}

const toSampledEvent = (row: SampledEventRow): SampledEvent => ({
  id: row.id,
  targetId: row.target_id,
  actorId: row.actor_id,
  occurredAt: Number(row.occurred_at),
});

/**
 * How many keys the seeded events are about: one per hundred events, so that a key's trail fills several pages of
 * 20 at every size, and a page filtered by target does the same work at 10k events as at 1M.
 */
export const EVENTS_PER_TARGET = 100;
/** How many admin keys made the seeded changes. */
export const SEEDED_ACTORS = 5;

/** Whether a PostgreSQL server answers at `serverUrl`; the reason when it does not. */
export async function postgresReachable(serverUrl: string): Promise<true | string> {
  try {
    await onPostgres(serverUrl, (client) => client.query('select 1'));
    return true;
  } catch (error) {
    return error instanceof Error ? error.message || String((error as NodeJS.ErrnoException).code) : String(error);
  }
}

/**
 * Seeds `keys` keys through the store, as `apikeys keys seed` does, then as many audit events, and samples keys
 * and events for the scenarios.
 */
async function seed(
  engine: Engine,
  databaseUrl: string,
  keys: number,
  sample: () => Promise<Samples>,
): Promise<Omit<SeededDatabase, 'drop'>> {
  const { store } = await openMigratedStore(parseDatabaseUrl(databaseUrl));
  try {
    const organizationId = DEFAULT_ORGANIZATION.id;
    const { secret } = await store.createAdminKey({ organizationId, name: 'bench' });
    let started = performance.now();
    await seedApiKeys(store, { organizationId, count: keys, workspaces: 3, users: 5, seed: 1, lifecycle: true });
    const seedSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    const targets = Math.max(1, Math.round(keys / EVENTS_PER_TARGET));
    const events = await seedAuditEvents(store, {
      organizationId,
      count: keys,
      targets,
      actors: SEEDED_ACTORS,
      seed: 1,
    });
    const eventSeedSeconds = (performance.now() - started) / 1000;
    const page = await store.listApiKeys({ organizationId, limit: 1000 });
    if (page.kind !== 'page') {
      throw new Error('a list without a cursor found no page');
    }
    return {
      engine,
      keys,
      events,
      databaseUrl,
      adminSecret: secret,
      seedSeconds,
      eventSeedSeconds,
      samples: await sample(),
      firstItems: page.keys.map((key) => toApiKeyJson(key, nowMicros())),
    };
  } finally {
    await store.close();
  }
}

/** Creates and seeds a fresh SQLite file in `dir`. */
export async function seedSqlite(dir: string, keys: number): Promise<SeededDatabase> {
  const path = join(dir, `bench-${keys}.sqlite`);
  const drop = async () => {
    for (const suffix of ['', '-wal', '-shm']) {
      rmSync(`${path}${suffix}`, { force: true });
    }
  };
  await drop();
  const sample = async (): Promise<Samples> => {
    const db = new Database(path, { readonly: true });
    const all = <Row>(query: string) =>
      db.prepare(query.replace('$1', '?').replace('$2', '?')).all(DEFAULT_ORGANIZATION.id, SAMPLE_SIZE) as Row[];
    try {
      return {
        keyIds: all<{ id: string }>(SAMPLE_SQL).map((row) => row.id),
        events: all<SampledEventRow>(SAMPLE_EVENTS_SQL).map(toSampledEvent),
        secrets: [],
      };
    } finally {
      db.close();
    }
  };
  return { ...(await seed('sqlite', `file:${path}`, keys, sample)), drop };
}

/**
 * Creates a bench database of its own for `keys` keys on the PostgreSQL server (dropping a leftover one), seeds it,
 * and runs VACUUM ANALYZE, as autovacuum would soon after a bulk load: the table is then as it would be in steady
 * state, with statistics for the planner and every row's commit status recorded on its page, instead of the first
 * scenarios paying for that on each page they read. (Not part of the seed time.)
 */
export async function seedPostgres(serverUrl: string, keys: number): Promise<SeededDatabase> {
  const name = postgresBenchDatabase(keys);
  const drop = () => onPostgres(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
  await drop();
  await onPostgres(serverUrl, (client) => client.query(`create database ${name}`));
  const url = databaseUrl(serverUrl, name);
  const sample = () =>
    onPostgres(url, async (client): Promise<Samples> => {
      await client.query('vacuum analyze');
      const parameters = [DEFAULT_ORGANIZATION.id, SAMPLE_SIZE];
      const keys = await client.query<{ id: string }>(SAMPLE_SQL, parameters);
      const events = await client.query<SampledEventRow>(SAMPLE_EVENTS_SQL, parameters);
      return { keyIds: keys.rows.map((row) => row.id), events: events.rows.map(toSampledEvent), secrets: [] };
    });
  return { ...(await seed('postgres', url, keys, sample)), drop: async () => void (await drop()) };
}

/** How many keys with known secrets a database gets for the verification scenarios. */
export const KNOWN_KEYS = 10_000;
/** The permissions of every key with a known secret, which the `+requirement` variants' requirements test. */
export const KNOWN_KEY_PERMISSIONS = ['documents.read', 'documents.write'] as const;
// One commit per key would take seconds per thousand on PostgreSQL: each transaction creates a chunk, a few at once.
const KNOWN_KEYS_PER_TRANSACTION = 500;
const TRANSACTIONS_AT_ONCE = 4;

/** What the server answers for a known key, by the server's own serializer. */
function validVerification(key: ApiKeyRecord, organization: OrganizationRecord): KeyVerification {
  const context = { defaultWorkspaceId: organization.defaultWorkspaceId, now: nowMicros() };
  return toKeyVerificationJson({ found: true, key, status: 'active', permitted: true }, organization.id, context);
}

async function createKnownKeys(store: Store, count: number): Promise<KnownKeys['keys']> {
  const organization = await store.getOrganization(DEFAULT_ORGANIZATION.id);
  if (!organization) {
    throw new Error(`the seeded database has no organization ${DEFAULT_ORGANIZATION.id}`);
  }
  const createdBy = { type: 'service_account', id: 'svcacct_bench' } as const;
  const createChunk = (from: number, to: number) =>
    store.transaction(async (transaction) => {
      const created = [];
      for (let index = from; index < to; index++) {
        const name = `bench verify ${index}`;
        const permissions = KNOWN_KEY_PERMISSIONS;
        created.push(await transaction.createApiKey({ organizationId: organization.id, name, createdBy, permissions }));
      }
      return created;
    });
  const keys: KnownKeys['keys'] = [];
  let next = 0;
  const worker = async () => {
    for (let from = next; from < count; from = next) {
      next = Math.min(count, from + KNOWN_KEYS_PER_TRANSACTION);
      for (const { apiKey, secret } of await createChunk(from, next)) {
        keys.push({ secret, verification: validVerification(apiKey, organization) });
      }
    }
  };
  await Promise.all(Array.from({ length: TRANSACTIONS_AT_ONCE }, worker));
  return keys;
}

/** Creates `KNOWN_KEYS` active keys in the default organization of a seeded database (also its audit events). */
export async function seedKnownKeys(databaseUrl: string): Promise<KnownKeys> {
  const { store } = await openMigratedStore(parseDatabaseUrl(databaseUrl));
  try {
    const started = performance.now();
    const keys = await createKnownKeys(store, KNOWN_KEYS);
    return { keys, seconds: (performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}
