import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  authHeaders,
  type PreparedDatabase,
  prepareDatabase,
  type StartedServerProcess,
  startServerProcess,
} from '@apikeys/server/testing';
import { DEFAULT_ORGANIZATION, microsToRfc3339, nowMicros, openStore, parseDatabaseUrl } from '@apikeys/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDefaults } from '../../src/config.js';
import { USAGE_FLUSH_INTERVAL_MS } from '../../src/verification/usage-recorder.js';

// One tenant floods usage reports of the most uses a report may hold, as fast as its connections allow, at a server
// process with the production defaults (rate limits included), long enough to include a periodic write of the uses.
// The server must keep answering its liveness probe promptly all along: reports past the budget are refused before
// their body is read, uses wait in memory by key (bounded), and each write statement holds the event loop only a few
// milliseconds.

const KEYS = 20_000;
const SENDERS = 8;
const USES_PER_REPORT = 1_000;
/** Longer than the usage write interval, so that a write of what the flood left happens during it. */
const FLOOD_MS = USAGE_FLUSH_INTERVAL_MS + 3_000;
const PROBE_EVERY_MS = 20;
/** The bound on the liveness probe's answer under the flood. */
const HEALTH_LIMIT_MS = 50;

/**
 * The flood, in a process of its own at the lowest priority: the attacker's machine is not the server's, and on this
 * one its client must not take the CPU the server and the probe need. Each of `senders` posts the bodies in turn
 * until `until` (a `Date.now()`); it prints the count of each status.
 */
const FLOOD_SCRIPT = `
const { url, headers, bodies, senders, until } = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const statuses = {};
const send = async (sender) => {
  for (let n = sender; Date.now() < until; n += senders) {
    const response = await fetch(url, { method: 'POST', headers, body: bodies[n % bodies.length] });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
};
Promise.all(Array.from({ length: senders }, (_, sender) => send(sender))).then(() => {
  process.stdout.write(JSON.stringify(statuses));
});
`;

/** Runs the flood; resolves with the count of each status once it is over. */
function flood(input: { url: string; headers: Record<string, string>; bodies: string[]; until: number }) {
  const child = spawn('nice', ['-n', '19', process.execPath, '-e', FLOOD_SCRIPT], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(JSON.stringify({ ...input, senders: SENDERS }));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise<Map<number, number>>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`the flood exited with ${code}`));
        return;
      }
      const counted = JSON.parse(output) as Record<string, number>;
      resolve(new Map(Object.entries(counted).map(([status, count]) => [Number(status), count])));
    });
  });
}

const rssMegabytes = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

describe('a flood of usage reports from one tenant', () => {
  let dir: string;
  let prepared: PreparedDatabase;
  let server: StartedServerProcess;
  let warmUpKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'apikeys-usage-flood-'));
    prepared = await prepareDatabase(`file:${join(dir, 'flood.sqlite')}`, { apiKeys: KEYS });
    const { store } = await openStore(parseDatabaseUrl(prepared.url));
    ({ secret: warmUpKey } = await store.createAdminKey({ organizationId: DEFAULT_ORGANIZATION.id, name: 'warm-up' }));
    await store.close();
    const defaults = configDefaults();
    // Its log goes to a file, as a production server's does: a pipe to this busy test process would stall it.
    server = await startServerProcess({
      logFile: join(dir, 'server.log'),
      env: {
        DATABASE_URL: prepared.url,
        RATE_LIMIT_PER_MINUTE: String(defaults.RATE_LIMIT_PER_MINUTE),
        RATE_LIMIT_BURST: String(defaults.RATE_LIMIT_BURST),
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`keeps /health answering within ${HEALTH_LIMIT_MS} ms, refuses reports past the budget, and bounds memory`, async () => {
    const headers = authHeaders(prepared.adminKey, {
      'vendor-version': LATEST_API_VERSION,
      'content-type': 'application/json',
    });
    const report = (offset: number) =>
      JSON.stringify({
        uses: Array.from({ length: USES_PER_REPORT }, (_, n) => ({
          api_key_id: prepared.keyIds[(offset + n) % prepared.keyIds.length],
          used_at: microsToRfc3339(nowMicros()),
        })),
      });
    // A few bodies made ahead, over every key, so that the senders spend their time sending.
    const bodies = Array.from({ length: KEYS / USES_PER_REPORT }, (_, n) => report(n * USES_PER_REPORT));
    // A server that has been serving: its paths have run before the flood, answered and refused (the first calls of
    // a fresh process, and of this test's own HTTP client, pay for compiling code once). With a key of its own, so
    // that the flooding key's budget is whole when the flood begins.
    const warmHeaders = { ...headers, 'x-api-key': warmUpKey };
    for (let n = 0; n < 50; n++) {
      const body = bodies[n % bodies.length];
      await (await fetch(`${server.baseUrl}/v1/keys/usage`, { method: 'POST', headers: warmHeaders, body })).text();
      await (await fetch(`${server.baseUrl}/health`)).text();
    }
    const healthMs: number[] = [];
    const rssBefore = rssMegabytes(server.pid);
    const until = Date.now() + FLOOD_MS;

    const counted = flood({ url: `${server.baseUrl}/v1/keys/usage`, headers, bodies, until });
    while (Date.now() < until) {
      const started = performance.now();
      const response = await fetch(`${server.baseUrl}/health`);
      await response.arrayBuffer();
      healthMs.push(performance.now() - started);
      expect(response.status).toBe(200);
      await sleep(PROBE_EVERY_MS);
    }
    const statuses = await counted;
    const rssAfter = rssMegabytes(server.pid);
    const sorted = [...healthMs].sort((a, b) => a - b);
    process.stdout.write(
      `usage flood: ${JSON.stringify(Object.fromEntries(statuses))} answers in ${FLOOD_MS / 1000} s; /health ` +
        `${sorted.length} probes, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, longest ` +
        `${sorted.at(-1)?.toFixed(1)} ms; RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB\n`,
    );

    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(429)).toBeGreaterThan(statuses.get(200) ?? 0);
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
    expect(healthMs.length).toBeGreaterThan(FLOOD_MS / (PROBE_EVERY_MS + HEALTH_LIMIT_MS));
    expect(sorted.at(-1)).toBeLessThan(HEALTH_LIMIT_MS);
    // The flood's garbage (each refused report is still received), not what it left behind: the pending uses are bounded.
    expect(rssAfter - rssBefore).toBeLessThan(150);
  });
});
