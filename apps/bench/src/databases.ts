import { knownKeysWithBase, seedWithBase } from './base/base-seeding.js';
import {
  type Engine,
  KNOWN_KEYS,
  type KnownKeys,
  type SeededDatabase,
  seedKnownKeys,
  seedPostgres,
  seedSqlite,
} from './seed.js';
import type { BaseBuild } from './targets.js';

/** How seeding one database went: what it holds and how long each part took. */
export interface SeedResult {
  engine: Engine;
  keys: number;
  /** Seconds the keys took. */
  seconds: number;
  /** Audit events seeded after the keys, and the seconds they took. */
  events: number;
  eventSeconds: number;
  /** Keys created with known secrets for verification (0 when none ran there), and the seconds they took. */
  knownKeys: number;
  knownKeySeconds: number;
  /** The base commit whose code seeded the database (`--base`); absent for the current code. */
  commit?: string;
}

/** What seeding needs of the suite's settings. */
export interface DatabaseSettings {
  workDir: string;
  /** The PostgreSQL server to create the bench databases on. */
  postgresUrl: string;
  onProgress(message: string): void;
}

/** A seeded database: its engine, its number of keys, and the base commit's build whose code seeds it (`--base`). */
export interface DatabaseId {
  engine: Engine;
  keys: number;
  build?: BaseBuild | undefined;
}

/** `postgres-10000`, `sqlite-10000@9845cbd`. */
const databaseKey = ({ engine, keys, build }: DatabaseId) => `${engine}-${keys}${build ? `@${build.label}` : ''}`;

/**
 * Seeds each database once, on first use, and drops them all at the end. The base commit's databases are seeded by
 * its own code (base/base-seeding.ts), each server reading what its own code wrote, under its own migrations.
 */
export class Databases {
  private readonly seeded = new Map<string, Promise<SeededDatabase>>();
  private readonly known = new Map<string, Promise<KnownKeys>>();
  readonly seeds: SeedResult[] = [];

  constructor(private readonly settings: DatabaseSettings) {}

  get(id: DatabaseId): Promise<SeededDatabase> {
    const { engine, keys, build } = id;
    const key = databaseKey(id);
    let database = this.seeded.get(key);
    if (!database) {
      const { workDir, postgresUrl } = this.settings;
      if (build && engine === 'postgres' && this.seeded.has(databaseKey({ engine, keys }))) {
        // The base's seeding drops a database of the current's name before it creates its own (base-seeding.ts).
        throw new Error(`the base's PostgreSQL database of ${keys} keys must be seeded before the current's`);
      }
      const by = build ? ` with base ${build.label}'s code` : '';
      this.settings.onProgress(`seeding ${keys} keys and as many audit events into ${engine}${by}…`);
      const seeding = build
        ? seedWithBase(build, workDir, engine, keys, postgresUrl)
        : engine === 'sqlite'
          ? seedSqlite(workDir, keys)
          : seedPostgres(postgresUrl, keys);
      database = seeding.then((seeded) => {
        const { events, seedSeconds: seconds, eventSeedSeconds: eventSeconds } = seeded;
        const commit = build ? { commit: build.label } : {};
        this.seeds.push({ engine, keys, seconds, events, eventSeconds, knownKeys: 0, knownKeySeconds: 0, ...commit });
        this.settings.onProgress(
          `seeded ${keys} keys into ${engine}${by} in ${seconds.toFixed(1)} s, ${events} audit events in ` +
            `${eventSeconds.toFixed(1)} s`,
        );
        return seeded;
      });
      this.seeded.set(key, database);
    }
    return database;
  }

  /** The keys with known secrets of a seeded database, created on first use (after its samples were taken). */
  knownKeys(id: DatabaseId): Promise<KnownKeys> {
    const { engine, keys, build } = id;
    const key = databaseKey(id);
    let known = this.known.get(key);
    if (!known) {
      known = this.get(id).then(async (database) => {
        const by = build ? ` with base ${build.label}'s code` : '';
        this.settings.onProgress(`creating ${KNOWN_KEYS} keys with known secrets in ${engine} (${keys} keys)${by}…`);
        const created = build
          ? await knownKeysWithBase(build, this.settings.workDir, database.databaseUrl)
          : await seedKnownKeys(database.databaseUrl);
        const seed = this.seeds.find(
          (entry) => entry.engine === engine && entry.keys === keys && entry.commit === build?.label,
        );
        if (seed) {
          seed.knownKeys = created.keys.length;
          seed.knownKeySeconds = created.seconds;
        }
        this.settings.onProgress(`created ${created.keys.length} keys in ${engine} in ${created.seconds.toFixed(1)} s`);
        return created;
      });
      this.known.set(key, known);
    }
    return known;
  }

  async dropAll(): Promise<void> {
    for (const database of this.seeded.values()) {
      await (await database.catch(() => undefined))?.drop();
    }
    this.seeded.clear();
  }
}
