import { KEY_USAGE_REPORT } from '@apikeys/api-types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVerifierClient, type KeyUse, type VerifierClient } from '../src/index.js';
import { toTimestamp, UsageReports } from '../src/verifier/usage-reports.js';
import {
  type FakeVerifierServer,
  keyId,
  sleep,
  startFakeVerifierServer,
  valid,
  waitFor,
} from './support/fake-verifier-server.js';

// last_used_at stays true behind a caching verifier: the keys it answers VALID from memory, which the server never
// saw, are reported with reportKeyUsage once per interval, one use per key, in requests of at most 1000 uses, and a
// report that fails is sent again at the next interval.

const SECRET = `sk-api-${'A'.repeat(43)}`;
const OTHER = `sk-api-${'B'.repeat(43)}`;
/** The spec's Timestamp: RFC 3339, UTC, exactly six fraction digits. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('caching verifier: usage reports', () => {
  let server: FakeVerifierServer;
  let verifier: VerifierClient;

  beforeEach(async () => {
    server = await startFakeVerifierServer();
    server.verdicts.set(SECRET, valid(keyId(1)));
    server.verdicts.set(OTHER, valid(keyId(2)));
    verifier = createVerifierClient({
      baseUrl: server.baseUrl,
      apiKey: 'sk-vfy-test',
      maxRetries: 0,
      cache: { usageReportIntervalMs: 300 },
    });
    await waitFor(() => verifier.cache?.live === true, 5_000, 'the feed to be live');
  });

  afterEach(async () => {
    await verifier.close();
    await server.close();
  });

  it('reports each key answered VALID from memory once per interval, with its latest use', async () => {
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(OTHER);
    const before = Date.now();
    for (let i = 0; i < 5; i += 1) {
      await verifier.keys.verify(SECRET);
      await verifier.keys.verify(OTHER);
      await sleep(10);
    }
    const after = Date.now();
    // A report may have gone during the loop (on a busy machine); the next one holds the latest uses.
    const reportsBefore = server.usageReports.length;

    await waitFor(() => server.usageReports.length > reportsBefore, 2_000, 'a usage report');

    const report = server.usageReports[reportsBefore];
    expect(report?.map((use) => use.api_key_id).sort()).toEqual([keyId(1), keyId(2)]);
    for (const uses of server.usageReports) {
      expect(new Set(uses.map((use) => use.api_key_id)).size).toBe(uses.length);
    }
    for (const use of report ?? []) {
      expect(use.used_at).toMatch(TIMESTAMP);
      // The latest use, not the first: at least three of the loop's 10 ms sleeps after `before` (Date.now() counts
      // whole milliseconds, so four sleeps can read as 39 ms).
      expect(Date.parse(use.used_at)).toBeGreaterThanOrEqual(before + 30);
      expect(Date.parse(use.used_at)).toBeLessThanOrEqual(after);
    }
  });

  it('reports nothing for answers that came from the server', async () => {
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(`sk-api-${'N'.repeat(43)}`);

    await sleep(700);

    expect(server.usageReports).toEqual([]);
  });

  it('reports nothing for NOT_FOUND or an invalid key answered from memory', async () => {
    const unknown = `sk-api-${'N'.repeat(43)}`;
    server.verdicts.set(SECRET, { valid: false, code: 'INACTIVE', key: valid(keyId(1)).key });
    for (const secret of [unknown, unknown, SECRET, SECRET]) {
      await verifier.keys.verify(secret);
    }

    await sleep(700);

    expect(verifier.cache?.hits).toBe(2);
    expect(server.usageReports).toEqual([]);
  });

  it('sends a failed report again at the next interval, merged with the uses noted since', async () => {
    server.nextUsageStatuses = [500];
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);
    await waitFor(() => server.usageReports.length === 1, 2_000, 'the first report');
    await verifier.keys.verify(OTHER);
    await verifier.keys.verify(OTHER);

    await waitFor(() => server.usageReports.length === 2, 2_000, 'the second report');

    expect(server.usageReports[0]?.map((use) => use.api_key_id)).toEqual([keyId(1)]);
    expect(server.usageReports[1]?.map((use) => use.api_key_id).sort()).toEqual([keyId(1), keyId(2)]);
    await sleep(400);
    expect(server.usageReports).toHaveLength(2);
  });

  it('sends what is left on close()', async () => {
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);

    await verifier.close();

    expect(server.usageReports.map((uses) => uses.map((use) => use.api_key_id))).toEqual([[keyId(1)]]);
  });
});

describe('UsageReports', () => {
  /** Reports whose sends are recorded, failing while `failing` is set. */
  function recordedReports() {
    const sent: KeyUse[][] = [];
    const state = { failing: false };
    const reports = new UsageReports({
      intervalMs: 60_000,
      send: async (uses) => {
        sent.push(uses);
        if (state.failing) {
          throw new Error('the server is down');
        }
      },
    });
    return { reports, sent, state };
  }

  it('sends at most 1000 uses per request', async () => {
    const { reports, sent } = recordedReports();
    for (let i = 0; i < 2_500; i += 1) {
      reports.note(keyId(i), 1_700_000_000_000 + i);
    }

    await reports.flush();

    expect(sent.map((uses) => uses.length)).toEqual([KEY_USAGE_REPORT.maxUses, KEY_USAGE_REPORT.maxUses, 500]);
    expect(new Set(sent.flat().map((use) => use.api_key_id)).size).toBe(2_500);
    expect(reports.pending).toBe(0);
  });

  it('keeps one entry per key however often it fails, the latest use winning', async () => {
    const { reports, sent, state } = recordedReports();
    state.failing = true;
    for (let round = 0; round < 5; round += 1) {
      for (let i = 0; i < 10; i += 1) {
        reports.note(keyId(i), 1_700_000_000_000 + round);
      }
      await reports.flush();
    }
    state.failing = false;

    expect(reports.pending).toBe(10);
    await reports.flush();

    expect(sent.at(-1)).toHaveLength(10);
    expect(sent.at(-1)?.every((use) => use.used_at === toTimestamp(1_700_000_000_004))).toBe(true);
    expect(reports.pending).toBe(0);
  });

  it('keeps the requests after a failed one for the next interval, and drops those that were received', async () => {
    const sent: KeyUse[][] = [];
    let calls = 0;
    const flaky = new UsageReports({
      intervalMs: 60_000,
      send: async (uses) => {
        calls += 1;
        sent.push(uses);
        if (calls === 2) {
          throw new Error('the server is down');
        }
      },
    });
    for (let i = 0; i < 2_500; i += 1) {
      flaky.note(keyId(i), 1_700_000_000_000);
    }

    await flaky.flush();

    expect(sent.map((uses) => uses.length)).toEqual([KEY_USAGE_REPORT.maxUses, KEY_USAGE_REPORT.maxUses]);
    expect(flaky.pending).toBe(1_500);
  });

  it('writes used_at with exactly six fraction digits, in UTC', () => {
    expect(toTimestamp(Date.UTC(2026, 10, 27, 12, 0, 41, 123))).toBe('2026-11-27T12:00:41.123000Z');
  });
});
