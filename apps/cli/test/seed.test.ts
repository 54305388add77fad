import { userInfo } from 'node:os';
import { DEFAULT_ORGANIZATION } from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorName } from '../src/store-session.js';
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
      const page = await store.listApiKeys({ organizationId: DEFAULT_ORGANIZATION.id, limit: 2001 });
      if (page.kind !== 'page') {
        throw new Error(`a list without a cursor found no page: ${page.kind}`);
      }
      const { keys } = page;
      expect(page.hasMore).toBe(false);
      expect(keys).toHaveLength(2000);
      expect(new Set(keys.map((key) => key.status))).toEqual(new Set(['active', 'inactive', 'archived']));
      expect(new Set(keys.map((key) => key.workspaceId)).size).toBe(4);
      expect(keys.filter((key) => key.workspaceId === null).length).toBeGreaterThan(0);
      expect(new Set(keys.map((key) => `${key.createdBy.type}:${key.createdBy.id}`)).size).toBe(4);
      expect(keys.every((key) => key.createdBy.type === 'user')).toBe(true);
      expect(new Set(keys.map((key) => key.createdAt)).size).toBe(2000);
      expect(new Set(keys.map((key) => key.id)).size).toBe(2000);
      expect(keys.every((key) => FORMAT.apiKeyId.test(key.id))).toBe(true);
      // Integer microseconds since the epoch, all within the last ten minutes.
      const nowMicros = Date.now() * 1000;
      expect(
        keys.every((key) => Number.isSafeInteger(key.createdAt) && Math.abs(nowMicros - key.createdAt) < 600_000_000),
      ).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('records the 2000 keys in exactly one api_key.seeded event, by the operator who ran the command', async () => {
    const store = await db.openStore();
    try {
      const trail = await store.listAuditEvents({ organizationId: DEFAULT_ORGANIZATION.id, limit: 1000 });
      if (trail.kind !== 'page') {
        throw new Error(`a list without a cursor found no page: ${trail.kind}`);
      }

      expect(trail.events).toEqual([
        expect.objectContaining({
          type: 'api_key.seeded',
          actor: { type: 'operator', name: operatorName() },
          target: { type: 'organization', id: DEFAULT_ORGANIZATION.id },
          changes: {},
          keyCount: 2000,
        }),
      ]);
      expect(operatorName()).toBe(userInfo().username);
    } finally {
      await store.close();
    }
  });
});
