import { setTimeout as sleep } from 'node:timers/promises';
import {
  API_KEYS_PATH,
  apiKeyPath,
  authHeaders,
  createTestKey,
  DEFAULT_ORGANIZATION,
  openTestStore,
  type PrometheusExposition,
  parsePrometheusText,
  specOperationIds,
  startTestServer,
  TEST_STORE,
  type TestServer,
  VERSION_HEADER,
} from '@apikeys/server/testing';
import { DatabaseUnavailableError, type Store } from '@apikeys/store';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { type MetricsServer, startMetricsServer } from '../../src/metrics/metrics-server.js';
import type { RateLimitSettings } from '../../src/rate-limits/request-limiter.js';

const REQUESTS = 'apikeys_http_requests_total';
const REQUEST_DURATION = 'apikeys_http_request_duration_seconds';
const QUERY_DURATION = 'apikeys_store_query_duration_seconds';
const DATABASE_ERRORS = 'apikeys_database_errors_total';
const REJECTIONS = 'apikeys_rate_limit_rejections_total';
const UNKNOWN_ID = 'apikey_000000000000000000000000';

/** The app with metrics on, and their listener, as `main` runs them. */
interface ObservedServer {
  server: TestServer;
  metricsUrl: string;
  scrape(): Promise<PrometheusExposition>;
  /** Scrapes until `ready` holds (a response's metrics are recorded once it has closed, just after it was sent). */
  scrapeUntil(ready: (exposition: PrometheusExposition) => boolean): Promise<PrometheusExposition>;
}

const running: { server: TestServer; metricsServer: MetricsServer }[] = [];

async function startObserved(
  options: { opened?: Awaited<ReturnType<typeof openTestStore>>; rateLimits?: RateLimitSettings } = {},
): Promise<ObservedServer> {
  const metrics = new Metrics();
  const server = await startTestServer({ ...options, metrics });
  const metricsServer = await startMetricsServer({ port: 0, host: '127.0.0.1', registry: metrics.registry });
  running.push({ server, metricsServer });
  const scrape = async () => {
    const response = await fetch(`${metricsServer.url}/metrics`);
    expect(response.status).toBe(200);
    return parsePrometheusText(await response.text());
  };
  return {
    server,
    metricsUrl: metricsServer.url,
    scrape,
    async scrapeUntil(ready) {
      for (let attempt = 0; ; attempt++) {
        const exposition = await scrape();
        if (ready(exposition) || attempt === 50) {
          return exposition;
        }
        await sleep(20);
      }
    },
  };
}

afterEach(async () => {
  await Promise.all(
    running.splice(0).map(({ server, metricsServer }) => Promise.all([server.close(), metricsServer.close()])),
  );
});

/** How much each series of `name` (keyed by the listed labels' values) grew from `before` to `after`. */
function growth(
  before: PrometheusExposition,
  after: PrometheusExposition,
  name: string,
  labels: readonly string[],
): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const sample of after.samples.filter((candidate) => candidate.name === name)) {
    const key = labels.map((label) => sample.labels[label]).join(' ');
    const delta = sample.value - before.sum(name, sample.labels);
    if (delta !== 0) {
      grown[key] = (grown[key] ?? 0) + delta;
    }
  }
  return grown;
}

/** A store whose `listApiKeys` fails as a database that did not answer in time would. */
async function timingOutStore(): Promise<Awaited<ReturnType<typeof openTestStore>>> {
  const opened = await openTestStore();
  const failing = new Proxy(opened.store, {
    get(target, property, receiver) {
      if (property === 'listApiKeys') {
        return async () => {
          throw new DatabaseUnavailableError('timeout', 'the database did not answer within 5000 ms');
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...opened, store: failing as Store };
}

describe('metrics of requests', () => {
  it('count each request by operationId and status, and time it by operationId', async () => {
    const observed = await startObserved();
    const { server } = observed;
    const { apiKey } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);
    const auth = { headers: authHeaders(server.adminKey) };
    const exchanges: [path: string, init: RequestInit, status: number][] = [
      [API_KEYS_PATH, auth, 200],
      [apiKeyPath(apiKey.id), auth, 200],
      [apiKeyPath(UNKNOWN_ID), auth, 404],
      ['/v1/no/such/route', auth, 404],
      [API_KEYS_PATH, { headers: VERSION_HEADER }, 401],
      ['/health', {}, 200],
      ['/ready', {}, 200],
    ];
    const before = await observed.scrape();

    for (const [path, init, status] of exchanges) {
      expect((await server.request(path, init)).response.status, path).toBe(status);
    }
    const after = await observed.scrapeUntil(
      (exposition) => exposition.sum(REQUESTS) - before.sum(REQUESTS) >= exchanges.length,
    );

    expect(growth(before, after, REQUESTS, ['operation', 'status'])).toEqual({
      'listApiKeys 200': 1,
      'listApiKeys 401': 1,
      'getApiKey 200': 1,
      'getApiKey 404': 1,
      'unmatched 404': 1,
      'getHealth 200': 1,
      'getReadiness 200': 1,
    });
    expect(growth(before, after, `${REQUEST_DURATION}_count`, ['operation'])).toEqual({
      listApiKeys: 2,
      getApiKey: 2,
      unmatched: 1,
      getHealth: 1,
      getReadiness: 1,
    });
    const listBuckets = after.samples.filter(
      (sample) => sample.name === `${REQUEST_DURATION}_bucket` && sample.labels.operation === 'listApiKeys',
    );
    expect(listBuckets.length).toBeGreaterThan(5);
    expect(listBuckets.at(-1)?.labels.le).toBe('+Inf');
    expect(after.sum(`${REQUEST_DURATION}_sum`, { operation: 'listApiKeys' })).toBeGreaterThan(0);
  });

  it('count a request whose client went away before the answer as aborted', async () => {
    const opened = await openTestStore();
    let reached: () => void = () => {};
    const listReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release: () => void = () => {};
    // Armed once the server has started: its warm-up lists keys too.
    let armed = false;
    const hanging = new Proxy(opened.store, {
      get(target, property, receiver) {
        if (property === 'listApiKeys') {
          return async (...args: Parameters<Store['listApiKeys']>) => {
            if (!armed) {
              return target.listApiKeys(...args);
            }
            reached();
            await new Promise<void>((resolve) => {
              release = resolve;
            });
            return target.listApiKeys(...args);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const observed = await startObserved({ opened: { ...opened, store: hanging as Store } });
    armed = true;
    const before = await observed.scrape();
    const abort = new AbortController();

    const request = fetch(`${observed.server.baseUrl}${API_KEYS_PATH}`, {
      headers: authHeaders(observed.server.adminKey),
      signal: abort.signal,
    });
    await listReached;
    abort.abort();
    await expect(request).rejects.toThrow();
    const after = await observed.scrapeUntil((exposition) => exposition.sum(REQUESTS) > before.sum(REQUESTS));
    release();

    expect(growth(before, after, REQUESTS, ['operation', 'status'])).toEqual({ 'listApiKeys aborted': 1 });
  });

  it('never label a series with a path, an ID or a secret: only operationIds, statuses and fixed names', async () => {
    const observed = await startObserved();
    const { server } = observed;
    const { apiKey, secret } = await createTestKey(server.store, DEFAULT_ORGANIZATION.id);

    await server.request(apiKeyPath(apiKey.id), { headers: authHeaders(server.adminKey) });
    await server.request(`${apiKeyPath(apiKey.id)}/unknown-suffix`, { headers: authHeaders(server.adminKey) });
    await server.request(API_KEYS_PATH, { headers: authHeaders(secret) });
    await server.request(`/${server.adminKey}`, { headers: authHeaders(server.adminKey) });
    const response = await fetch(`${observed.metricsUrl}/metrics`);
    const text = await response.text();
    const exposition = parsePrometheusText(text);

    for (const leak of [apiKey.id, secret, server.adminKey, 'unknown-suffix', 'sk-']) {
      expect(text).not.toContain(leak);
    }
    const operations = new Set(exposition.samples.flatMap((sample) => sample.labels.operation ?? []));
    expect([...operations].every((operation) => [...specOperationIds(), 'unmatched'].includes(operation))).toBe(true);
    expect(operations).toContain('unmatched');
    const statuses = exposition.samples.flatMap((sample) => (sample.name === REQUESTS ? [sample.labels.status] : []));
    expect(statuses.every((status) => /^(\d{3}|aborted)$/.test(status ?? ''))).toBe(true);
  });
});

describe('metrics of the store', () => {
  it('time every store call by method name, as its query kind', async () => {
    const observed = await startObserved();
    const before = await observed.scrape();

    await observed.server.request(API_KEYS_PATH, { headers: authHeaders(observed.server.adminKey) });
    await observed.server.request('/ready');
    const after = await observed.scrapeUntil((exposition) => exposition.sum(REQUESTS) - before.sum(REQUESTS) >= 2);

    expect(growth(before, after, `${QUERY_DURATION}_count`, ['kind', 'outcome'])).toEqual({
      'findCredential ok': 1,
      'listApiKeys ok': 1,
      'ping ok': 1,
    });
    expect(after.types.get(QUERY_DURATION)).toBe('histogram');
  });

  it('count a database that is unavailable by reason, and time the failed call as an error', async () => {
    const observed = await startObserved({ opened: await timingOutStore() });
    const before = await observed.scrape();

    const { response } = await observed.server.request(API_KEYS_PATH, {
      headers: authHeaders(observed.server.adminKey),
    });
    const after = await observed.scrapeUntil((exposition) => exposition.sum(REQUESTS) > before.sum(REQUESTS));

    expect(response.status).toBe(503);
    expect(growth(before, after, DATABASE_ERRORS, ['reason'])).toEqual({ timeout: 1 });
    expect(growth(before, after, `${QUERY_DURATION}_count`, ['kind', 'outcome'])).toEqual({
      'findCredential ok': 1,
      'listApiKeys error': 1,
    });
    expect(growth(before, after, REQUESTS, ['operation', 'status'])).toEqual({ 'listApiKeys 503': 1 });
  });

  it(`expose the connection pools as gauges read at each scrape (${TEST_STORE})`, async () => {
    const observed = await startObserved();
    await observed.server.request(API_KEYS_PATH, { headers: authHeaders(observed.server.adminKey) });

    const exposition = await observed.scrape();

    const gauges = [
      'apikeys_database_pool_connections',
      'apikeys_database_pool_connections_in_use',
      'apikeys_database_pool_waiting',
    ];
    if (TEST_STORE === 'sqlite') {
      // SQLite has one connection and no pool: no gauge pretends otherwise.
      expect(gauges.filter((gauge) => exposition.types.has(gauge))).toEqual([]);
      return;
    }
    expect(gauges.map((gauge) => exposition.types.get(gauge))).toEqual(['gauge', 'gauge', 'gauge']);
    const pools = (gauge: string) =>
      Object.fromEntries(
        exposition.samples.flatMap((sample) => (sample.name === gauge ? [[sample.labels.pool, sample.value]] : [])),
      );
    expect(Object.keys(pools('apikeys_database_pool_connections')).sort()).toEqual([
      'maintenance',
      'pipeline',
      'transactions',
    ]);
    expect(pools('apikeys_database_pool_connections').pipeline).toBeGreaterThanOrEqual(1);
    expect(pools('apikeys_database_pool_connections_in_use')).toMatchObject({ pipeline: 0, transactions: 0 });
    expect(pools('apikeys_database_pool_waiting')).toMatchObject({ pipeline: 0, transactions: 0 });
  });
});

describe('metrics of rate limits', () => {
  it('count requests refused by the admin key budget and by failed authentications, by limit', async () => {
    const observed = await startObserved({ rateLimits: { perMinute: 6, burst: 1, authFailuresPerMinute: 1 } });
    const { server } = observed;
    const before = await observed.scrape();

    const statuses = [];
    for (const key of [server.adminKey, server.adminKey, 'sk-adm-wrong', 'sk-adm-wrong']) {
      statuses.push((await server.request(API_KEYS_PATH, { headers: authHeaders(key) })).response.status);
    }
    const after = await observed.scrapeUntil((exposition) => exposition.sum(REQUESTS) - before.sum(REQUESTS) >= 4);

    expect(statuses).toEqual([200, 429, 401, 429]);
    expect(growth(before, after, REJECTIONS, ['limit'])).toEqual({ admin_key: 1, auth_failures: 1 });
    expect(growth(before, after, REQUESTS, ['operation', 'status'])).toEqual({
      'listApiKeys 200': 1,
      'listApiKeys 401': 1,
      'listApiKeys 429': 2,
    });
  });
});

describe('the exposition', () => {
  it('parses, holds the default process metrics, and shows every error and rejection counter from 0', async () => {
    const observed = await startObserved();

    const exposition = await observed.scrape();

    expect(
      Object.fromEntries(
        [
          'process_cpu_seconds_total',
          'process_resident_memory_bytes',
          'nodejs_eventloop_lag_seconds',
          'nodejs_heap_size_used_bytes',
          'nodejs_gc_duration_seconds',
        ].map((name) => [name, exposition.types.get(name)]),
      ),
    ).toEqual({
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
      nodejs_gc_duration_seconds: 'histogram',
    });
    expect(exposition.sum('process_cpu_seconds_total')).toBeGreaterThan(0);
    const zeros = (name: string, label: string) =>
      Object.fromEntries(
        exposition.samples.flatMap((sample) => (sample.name === name ? [[sample.labels[label], sample.value]] : [])),
      );
    expect(zeros(DATABASE_ERRORS, 'reason')).toEqual({
      unreachable: 0,
      timeout: 0,
      busy: 0,
      read_only: 0,
      full: 0,
      io_error: 0,
      other: 0,
    });
    expect(zeros(REJECTIONS, 'limit')).toEqual({ admin_key: 0, auth_failures: 0 });
  });

  it('is served at GET /metrics only, in the Prometheus text format', async () => {
    const observed = await startObserved();

    const metrics = await fetch(`${observed.metricsUrl}/metrics?debug=1`);
    const other = await fetch(`${observed.metricsUrl}/`);
    const post = await fetch(`${observed.metricsUrl}/metrics`, { method: 'POST' });

    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parsePrometheusText(await metrics.text()).types.get(REQUESTS)).toBe('counter');
    expect([other.status, post.status]).toEqual([404, 404]);
  });
});
