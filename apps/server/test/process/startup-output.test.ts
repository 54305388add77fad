import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerProcess, spawnServerProcess, startServerProcess } from '@apikeys/server/testing';
import { openMigratedStore, parseDatabaseUrl } from '@apikeys/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CREATE_ADMIN_KEY_COMMAND } from '../../src/startup-hints.js';

/** What a newcomer sees when starting the server: where it listens, on which store, and how to get an admin key. */
describe('the server at start', () => {
  let dir: string;
  const running: ServerProcess[] = [];
  const databaseUrl = () => `file:${join(dir, 'keys.sqlite')}`;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'apikeys-startup-'));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('logs JSON where it listens and which store, then that it is ready, then how to create an admin key', async () => {
    const server = await startServerProcess({ env: { DATABASE_URL: databaseUrl() } });
    running.push(server);

    const hint = await server.waitForLine((line) => line.msg?.startsWith('no admin key yet') === true, 5000);
    const readiness = await fetch(`${server.baseUrl}/ready`);

    expect(server.lines.find((line) => line.msg === 'listening')).toMatchObject({
      url: server.baseUrl,
      store: 'sqlite',
      database: join(dir, 'keys.sqlite'),
    });
    expect(server.lines.find((line) => line.msg === 'ready')).toMatchObject({
      url: server.baseUrl,
      warm_up_ms: expect.any(Number),
    });
    expect(readiness.status).toBe(200);
    const startLines = ['listening', 'ready', hint.msg];
    expect(server.lines.map((line) => line.msg).filter((msg) => startLines.includes(msg))).toEqual(startLines);
    expect(hint.msg).toContain(CREATE_ADMIN_KEY_COMMAND);
  });

  it('gives no hint once an admin key exists', async () => {
    const { store } = await openMigratedStore(parseDatabaseUrl(databaseUrl()));
    const [organization] = await store.listOrganizations();
    await store.createAdminKey({ organizationId: organization?.id ?? '', name: 'ops' });
    await store.close();

    const server = await startServerProcess({ env: { DATABASE_URL: databaseUrl() } });
    // Every line the process will ever write is in once it has exited.
    const exit = await server.stop();

    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.lines.some((line) => line.msg?.startsWith('no admin key yet'))).toBe(false);
  });

  it('writes human-readable lines instead of JSON with LOG_FORMAT=pretty', async () => {
    const server = spawnServerProcess({ env: { DATABASE_URL: databaseUrl(), LOG_FORMAT: 'pretty' } });
    running.push(server);

    const listening = await server.waitForLine((line) => String(line.raw ?? '').includes('listening'), 30_000);

    expect(listening.raw).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: listening$/);
    expect(server.lines.every((line) => line.raw !== undefined)).toBe(true);
  });
});
