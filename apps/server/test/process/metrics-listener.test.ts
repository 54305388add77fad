import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSIONS } from '@apikeys/api-types';
import {
  API_KEYS_PATH,
  authHeaders,
  createTestDatabase,
  fetchText,
  type PreparedDatabase,
  type PrometheusExposition,
  parsePrometheusText,
  postgresAvailable,
  prepareDatabase,
  type StartedServerProcess,
  spawnServerProcess,
  startServerProcess,
  type TestDatabase,
} from '@apikeys/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const REQUESTS = 'apikeys_http_requests_total';

const running: StartedServerProcess[] = [];
let directory: string;

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'apikeys-metrics-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.kill()));
});
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<StartedServerProcess> {
  const server = await startServerProcess({ env });
  running.push(server);
  return server;
}

/** The URL the server logged in its `metrics listening` line. */
async function metricsUrlOf(server: StartedServerProcess): Promise<string> {
  const line = await server.waitForLine((candidate) => candidate.msg === 'metrics listening', 5000);
  expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return String(line.url);
}

async function scrape(metricsUrl: string): Promise<PrometheusExposition> {
  const { response, text } = await fetchText(`${metricsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(text);
}

/** Asks the API port for `/metrics`, as someone probing for metrics there would: it must answer as the API does. */
async function expectNoMetricsOnApiPort(server: StartedServerProcess, prepared: PreparedDatabase): Promise<void> {
  for (const init of [{}, { headers: authHeaders(prepared.adminKey) }]) {
    const { response, body, text } = await fetchText(`${server.baseUrl}/metrics`, init);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toMatchObject({ type: 'error' });
    expect(text).not.toContain('# TYPE');
  }
}

describe('metrics of the server process', () => {
  it('are off unless METRICS_PORT is set: no listener, and /metrics on the API port is an API error', async () => {
    const prepared = await prepareDatabase(`file:${join(directory, 'off', 'db.sqlite')}`);
    const server = await start({ DATABASE_URL: prepared.url });

    expect(server.lines.filter((line) => line.msg === 'metrics listening')).toEqual([]);
    await expectNoMetricsOnApiPort(server, prepared);
  });

  it('are served at GET /metrics on a port of their own (0: the one it logs), never on the API port', async () => {
    const prepared = await prepareDatabase(`file:${join(directory, 'on', 'db.sqlite')}`);
    const server = await start({ DATABASE_URL: prepared.url, METRICS_PORT: '0' });
    const metricsUrl = await metricsUrlOf(server);

    const list = await fetchText(`${server.baseUrl}${API_KEYS_PATH}`, { headers: authHeaders(prepared.adminKey) });
    const exposition = await scrape(metricsUrl);

    expect(list.response.status).toBe(200);
    expect(new URL(metricsUrl).port).not.toBe(new URL(server.baseUrl).port);
    expect(exposition.sum(REQUESTS, { operation: 'listApiKeys', status: '200' })).toBe(1);
    // The warm-up before the server reports listening sends one request per operation of each API version past the
    // metrics: they are not counted as requests, but their store calls are timed (one list per version).
    expect(exposition.sum(REQUESTS)).toBe(1);
    expect(exposition.sum('apikeys_store_query_duration_seconds_count', { kind: 'listApiKeys' })).toBe(
      1 + API_VERSIONS.length,
    );
    expect(exposition.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    await expectNoMetricsOnApiPort(server, prepared);
  });

  it('shut down gracefully with metrics on: exit 0, and nothing serves metrics afterwards', async () => {
    const prepared = await prepareDatabase(`file:${join(directory, 'stop', 'db.sqlite')}`);
    const server = await start({ DATABASE_URL: prepared.url, METRICS_PORT: '0' });
    const metricsUrl = await metricsUrlOf(server);
    await scrape(metricsUrl);

    const exit = await server.stop();

    expect(exit).toEqual({ code: 0, signal: null });
    await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow();
  });

  it('refuse to start on a METRICS_PORT already taken, and say which setting is at fault', async () => {
    const prepared = await prepareDatabase(`file:${join(directory, 'taken', 'db.sqlite')}`);
    const occupant = createServer();
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
    const { port } = occupant.address() as AddressInfo;
    try {
      const server = spawnServerProcess({ env: { DATABASE_URL: prepared.url, METRICS_PORT: String(port) } });

      const exit = await server.exited;

      expect(exit.code).toBe(1);
      expect(server.stderr()).toMatch(/metrics cannot listen on METRICS_HOST\/METRICS_PORT: .*EADDRINUSE/);
      expect(server.lines.filter((line) => line.msg === 'listening')).toEqual([]);
    } finally {
      occupant.close();
    }
  });
});

describe.runIf(await postgresAvailable())('metrics of a server process on PostgreSQL', () => {
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await database?.drop();
  });

  it('include the connection pools: open, in use and waiting, by pool', async () => {
    database = await createTestDatabase();
    const prepared = await prepareDatabase(database.url);
    const server = await start({ DATABASE_URL: prepared.url, DATABASE_POOL_SIZE: '3', METRICS_PORT: '0' });
    const metricsUrl = await metricsUrlOf(server);

    await fetchText(`${server.baseUrl}${API_KEYS_PATH}`, { headers: authHeaders(prepared.adminKey) });
    const exposition = await scrape(metricsUrl);

    const byPool = (name: string): Record<string, number> =>
      Object.fromEntries(
        exposition.samples.flatMap((sample) => (sample.name === name ? [[sample.labels.pool, sample.value]] : [])),
      );
    const open = byPool('apikeys_database_pool_connections');
    expect(Object.keys(open).sort()).toEqual(['maintenance', 'pipeline', 'transactions']);
    expect(open.pipeline).toBeGreaterThanOrEqual(1);
    expect(Object.values(open).every((size) => size <= 3)).toBe(true);
    expect(byPool('apikeys_database_pool_connections_in_use')).toMatchObject({ pipeline: 0 });
    expect(byPool('apikeys_database_pool_waiting')).toEqual({ pipeline: 0, transactions: 0, maintenance: 0 });
  });
});
