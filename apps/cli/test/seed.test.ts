import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, ENGINES } from './databases.js';
import { FORMAT, runCliJson } from './run-cli.js';

describe.each(ENGINES)('apikeys keys seed on $engine', ({ create }) => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await create();
  });
  afterAll(() => db.drop());

  it('--count 2000 --workspaces 3 --users 4 creates 2000 distinct keys spread over every status, workspace and user', async () => {
    const args = ['keys', 'seed', '--count', '2000', '--workspaces', '3', '--users', '4', '--seed', '9'];

    const output = await runCliJson<{ created: number }>(args, db.env);

    expect(output).toEqual({ created: 2000 });
    const store = await db.openStore();
    try {
      const page = await store.listApiKeys({ organizationId: 'org_default', limit: 2001 });
      const keys = page?.data ?? [];
      expect(page?.hasMore).toBe(false);
      expect(keys).toHaveLength(2000);
      expect(new Set(keys.map((key) => key.status))).toEqual(new Set(['active', 'inactive', 'archived']));
      expect(new Set(keys.map((key) => key.workspace_id)).size).toBe(4);
      expect(keys.filter((key) => key.workspace_id === null).length).toBeGreaterThan(0);
      expect(new Set(keys.map((key) => `${key.created_by.type}:${key.created_by.id}`)).size).toBe(4);
      expect(keys.every((key) => key.created_by.type === 'user')).toBe(true);
      expect(new Set(keys.map((key) => key.created_at)).size).toBe(2000);
      expect(new Set(keys.map((key) => key.id)).size).toBe(2000);
      expect(keys.every((key) => FORMAT.apiKeyId.test(key.id) && FORMAT.createdAt.test(key.created_at))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
