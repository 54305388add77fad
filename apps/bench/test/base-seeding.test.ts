import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPostgres, postgresAvailable, TEST_POSTGRES_URL } from '@apikeys/server/testing';
import { parseDatabaseUrl } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareBaseBuild } from '../src/base/base-build.js';
import { knownKeysWithBase, seedWithBase } from '../src/base/base-seeding.js';
import type { BaseBuild } from '../src/targets.js';

// The seeding of a base commit, run by seed-worker.ts in a child process, here with this checkout standing in for the
// base's (installed, with the bench's seeding): what a base's build is asked for, without building one.

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const build: BaseBuild = { commit: 'HEAD', label: 'test', root: repoRoot };
// An odd size, so that the database the seeding names (apikeys_bench_<keys>) is no real run's.
const KEYS = 1234;

let workDir: string;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'bench-base-seeding-'));
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('seedWithBase on SQLite', () => {
  it("seeds a file of its own with the base's code, samples it, and drops it", async () => {
    const seeded = await seedWithBase(build, workDir, 'sqlite', KEYS, TEST_POSTGRES_URL);
    const location = parseDatabaseUrl(seeded.databaseUrl);
    const path = location.kind === 'sqlite' ? location.path : '';

    expect(path).toBe(join(workDir, 'base-test', `bench-${KEYS}.sqlite`));
    expect(seeded).toMatchObject({ engine: 'sqlite', keys: KEYS, events: KEYS });
    expect(seeded.samples.keyIds).toHaveLength(KEYS);
    expect(seeded.adminSecret).toMatch(/^sk-adm-/);

    await seeded.drop();
    expect(existsSync(path)).toBe(false);
  }, 120_000);

  it("rejects with the worker's own error when the base's code fails", async () => {
    await expect(knownKeysWithBase(build, workDir, 'mysql://nowhere/bench')).rejects.toThrow(
      /^seeding with base test \(known-keys mysql:\/\/nowhere\/bench\) failed:\n.*DATABASE_URL must start with file:/s,
    );
  }, 60_000);
});

if (await postgresAvailable()) {
  describe('seedWithBase on PostgreSQL', () => {
    const names = () =>
      onPostgres(TEST_POSTGRES_URL, async (client) => {
        const { rows } = await client.query<{ datname: string }>(
          'select datname from pg_database where datname like $1 order by datname',
          [`apikeys_bench_${KEYS}%`],
        );
        return rows.map((row) => row.datname);
      });

    it('renames the database the base seeded so that the current can seed its own, and drops it', async () => {
      const seeded = await seedWithBase(build, workDir, 'postgres', KEYS, TEST_POSTGRES_URL);

      expect(new URL(seeded.databaseUrl).pathname).toBe(`/apikeys_bench_${KEYS}_base`);
      expect(await names()).toEqual([`apikeys_bench_${KEYS}_base`]);
      expect(seeded.samples.keyIds).toHaveLength(KEYS);

      await seeded.drop();
      expect(await names()).toEqual([]);
    }, 120_000);
  });
}

describe('prepareBaseBuild', () => {
  it('refuses a commit the repository does not have, before building anything', async () => {
    await expect(prepareBaseBuild(repoRoot, 'no-such-commit-of-the-bench', () => {})).rejects.toThrow(
      '--base no-such-commit-of-the-bench: no such commit',
    );
  });
});
