import { DEFAULT_ORGANIZATION } from '@apikeys/server/testing';
import { hashSecret, type Store } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, ENGINES } from './databases.js';
import { FORMAT, runCliJson } from './run-cli.js';

// The command-by-command suite runs on SQLite (commands.test.ts) and `keys seed` on both engines (seed.test.ts); this
// checks that the CLI also opens, migrates, writes to and closes a database of each engine (an open pool would hang
// it on PostgreSQL).
describe.each(ENGINES)('apikeys on $engine', ({ create }) => {
  let db: CliDatabase;
  let store: Store;
  beforeAll(async () => {
    db = await create();
    store = await db.openStore();
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  it('migrate on a new database applies the initial migration', async () => {
    const output = await runCliJson<{ applied: string[] }>(['migrate'], db.env);

    expect(output.applied).toContain('0001-initial');
  });

  it('keys create stores a key whose secret the store recognizes', async () => {
    const created = await runCliJson<{ id: string; key: string }>(['keys', 'create', '--name', 'pg key'], db.env);

    expect(created).toMatchObject({ id: expect.stringMatching(FORMAT.apiKeyId), status: 'active' });
    expect(await store.findCredential(hashSecret(created.key))).toEqual({
      kind: 'api_key',
      organizationId: DEFAULT_ORGANIZATION.id,
    });
  });
});
