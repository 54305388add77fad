import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseUrl, onPostgres } from '@apikeys/server/testing';
import { parseDatabaseUrl } from '@apikeys/store';
import type { Engine, KnownKeys, SeededDatabase } from '../seed.js';
import type { BaseBuild } from '../targets.js';
import { BASE_SEED_MODULE } from './base-build.js';

const WORKER = fileURLToPath(new URL('./seed-worker.ts', import.meta.url));

/** Runs `seed-worker.ts` in the base's checkout with `args`; resolves with the JSON it wrote. */
function runWorker<Result>(build: BaseBuild, workDir: string, args: readonly string[]): Promise<Result> {
  const resultFile = join(workDir, `base-seed-${process.pid}-${Date.now()}.json`);
  return new Promise((resolve, reject) => {
    const seedModule = join(build.root, BASE_SEED_MODULE);
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, resultFile, seedModule, ...args], {
      cwd: join(build.root, 'apps/bench'),
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`seeding with base ${build.label} (${args.join(' ')}) failed:\n${stderr.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(readFileSync(resultFile, 'utf8')) as Result);
      } catch (error) {
        reject(error);
      } finally {
        rmSync(resultFile, { force: true });
      }
    });
  });
}

/** The name the base's database of `keys` keys is given on the PostgreSQL server once seeded. */
export const basePostgresDatabase = (seededName: string) => `${seededName}_base`;

/**
 * Seeds a database of `keys` keys for the base's server with the base's own bench seeding and store code (its
 * schema, its migrations, its seed), in a process of the base's checkout. SQLite goes into a directory of its own.
 * On PostgreSQL the base's seeding names the database as the current's (`apikeys_bench_<keys>`, dropping a leftover
 * of that name first), so it must run before the current's, and its database is renamed `apikeys_bench_<keys>_base`
 * once seeded.
 */
export async function seedWithBase(
  build: BaseBuild,
  workDir: string,
  engine: Engine,
  keys: number,
  postgresUrl: string,
): Promise<SeededDatabase> {
  if (engine === 'sqlite') {
    const dir = join(workDir, `base-${build.label}`);
    mkdirSync(dir, { recursive: true });
    const seeded = await runWorker<Omit<SeededDatabase, 'drop'>>(build, workDir, ['sqlite', dir, String(keys)]);
    const location = parseDatabaseUrl(seeded.databaseUrl);
    if (location.kind !== 'sqlite') {
      throw new Error(`base ${build.label} seeded SQLite at ${seeded.databaseUrl}`);
    }
    const drop = async () => {
      for (const suffix of ['', '-wal', '-shm']) {
        rmSync(`${location.path}${suffix}`, { force: true });
      }
    };
    return { ...seeded, drop };
  }
  const seeded = await runWorker<Omit<SeededDatabase, 'drop'>>(build, workDir, ['postgres', postgresUrl, String(keys)]);
  const seededName = new URL(seeded.databaseUrl).pathname.slice(1);
  const name = basePostgresDatabase(seededName);
  const dropBase = (client: Parameters<Parameters<typeof onPostgres>[1]>[0]) =>
    client.query(`drop database if exists ${name} with (force)`);
  await onPostgres(postgresUrl, async (client) => {
    await dropBase(client);
    await client.query(`alter database ${seededName} rename to ${name}`);
  });
  return {
    ...seeded,
    databaseUrl: databaseUrl(postgresUrl, name),
    drop: () => onPostgres(postgresUrl, async (client) => void (await dropBase(client))),
  };
}

/** Creates the keys with known secrets of a base database with the base's own code (`seedKnownKeys`). */
export function knownKeysWithBase(build: BaseBuild, workDir: string, databaseUrl: string): Promise<KnownKeys> {
  return runWorker<KnownKeys>(build, workDir, ['known-keys', databaseUrl]);
}
