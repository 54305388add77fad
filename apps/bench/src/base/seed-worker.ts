// Seeds a database for the base commit's server with the base's own code: run by base-seeding.ts in the base's
// checkout (working directory its apps/bench, so that `--import tsx` and every package resolve to the base's), it
// imports the base's bench seeding (its apps/bench/src/seed.ts, on the base's store) and writes what it seeded as
// JSON to a file:
//   seed-worker.ts <result file> <seed module> sqlite <dir> <keys>
//   seed-worker.ts <result file> <seed module> postgres <server url> <keys>
//   seed-worker.ts <result file> <seed module> known-keys <database url>
// Nothing of the current code is imported here (the types are erased): what runs is the base's.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { KnownKeys, SeededDatabase } from '../seed.js';

/** The base's seeding functions this worker calls, as the bench has had them since its verification scenarios. */
interface BaseSeeding {
  seedSqlite(dir: string, keys: number): Promise<SeededDatabase>;
  seedPostgres(serverUrl: string, keys: number): Promise<SeededDatabase>;
  seedKnownKeys(databaseUrl: string): Promise<KnownKeys>;
}

const [resultFile, seedModule, command, location, keys] = process.argv.slice(2);
if (!resultFile || !seedModule || !location) {
  throw new Error(`usage: seed-worker.ts <result file> <seed module> <command> <location> [keys]`);
}
const seeding = (await import(pathToFileURL(seedModule).href)) as Partial<BaseSeeding>;
const missing = (['seedSqlite', 'seedPostgres', 'seedKnownKeys'] as const).filter((name) => !seeding[name]);
if (missing.length > 0) {
  throw new Error(`${seedModule} has no ${missing.join(', ')}: the bench cannot seed for this base`);
}
const { seedSqlite, seedPostgres, seedKnownKeys } = seeding as BaseSeeding;

/** A seeded database without its `drop`, which cannot cross processes (base-seeding.ts drops it). */
const withoutDrop = ({ drop: _drop, ...seeded }: SeededDatabase) => seeded;

let result: unknown;
if (command === 'sqlite') {
  result = withoutDrop(await seedSqlite(location, Number(keys)));
} else if (command === 'postgres') {
  result = withoutDrop(await seedPostgres(location, Number(keys)));
} else if (command === 'known-keys') {
  result = await seedKnownKeys(location);
} else {
  throw new Error(`unknown command ${JSON.stringify(command)}`);
}
writeFileSync(resultFile, JSON.stringify(result));
// The base's store and pools are closed by its seeding; exit even if a library keeps a timer alive.
process.exit(0);
