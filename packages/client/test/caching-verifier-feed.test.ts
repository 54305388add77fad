import { LATEST_API_VERSION } from '@apikeys/api-types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVerifierClient, type VerifierClient } from '../src/index.js';
import {
  type FakeVerifierServer,
  keyId,
  sleep,
  startFakeVerifierServer,
  valid,
  waitFor,
} from './support/fake-verifier-server.js';

// The change feed of the caching verifier: when it is live, when it is lost (silence, the end of the stream, a
// refusal), that losing it empties the cache at once and sends verifications to the server, and that it subscribes
// again by itself, with backoff, until close(). The fake server announces a 100 ms heartbeat: silence for 250 ms
// loses the feed.

let server: FakeVerifierServer;
let verifier: VerifierClient;

const SECRET = `sk-api-${'A'.repeat(43)}`;

function cachingVerifier() {
  verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', maxRetries: 0, cache: true });
  return verifier;
}

/** A verifier whose feed is live and which holds the verdict for SECRET. */
async function primedVerifier() {
  cachingVerifier();
  await waitFor(() => verifier.cache?.live === true, 5_000, 'the feed to be live');
  await verifier.keys.verify(SECRET);
  expect(verifier.cache?.size).toBe(1);
  return verifier;
}

beforeEach(async () => {
  server = await startFakeVerifierServer();
  server.verdicts.set(SECRET, valid(keyId(1)));
});

afterEach(async () => {
  await verifier?.close();
  await server.close();
});

describe('caching verifier: subscribing', () => {
  it('subscribes with the client key, the latest version, and asks for an event stream', async () => {
    cachingVerifier();
    await waitFor(() => verifier.cache?.live === true);

    expect(server.subscriptions).toHaveLength(1);
    expect(server.subscriptions[0]).toMatchObject({
      'x-api-key': 'sk-vfy-test',
      'vendor-version': LATEST_API_VERSION,
      accept: 'text/event-stream',
    });
  });

  it('is live only once subscribed arrives', async () => {
    server.nextSubscriptions = ['silent'];
    cachingVerifier();
    await waitFor(() => server.openStreams === 1);
    expect(verifier.cache?.live).toBe(false);

    server.send({ type: 'subscribed', heartbeat_interval_ms: 100 });

    await waitFor(() => verifier.cache?.live === true);
  });

  it('stays live while heartbeats keep coming', async () => {
    await primedVerifier();

    await sleep(600);

    expect(verifier.cache).toMatchObject({ live: true, size: 1 });
    expect(server.subscriptions).toHaveLength(1);
  });

  it('does not trust a stream that begins with anything but subscribed', async () => {
    server.nextSubscriptions = ['silent'];
    cachingVerifier();
    await waitFor(() => server.openStreams === 1);

    server.send({ type: 'heartbeat' });

    await waitFor(() => server.subscriptions.length === 2, 5_000, 'a new subscription');
    expect(server.subscriptions).toHaveLength(2);
  });
});

describe('caching verifier: events it cannot read or does not know', () => {
  it('forgets everything on an event whose data it cannot read, and stays live', async () => {
    await primedVerifier();

    server.sendRaw('event: api_key_changed\ndata: {not json\n\n');
    await waitFor(() => verifier.cache?.size === 0, 2_000, 'the cache to be emptied');

    expect(verifier.cache?.live).toBe(true);
  });

  it('takes an event of a kind it does not know as a sign of life, and nothing more', async () => {
    await primedVerifier();
    server.heartbeats = false;

    for (let i = 0; i < 6; i += 1) {
      server.send({ type: 'something_new' });
      await sleep(100);
    }

    expect(verifier.cache).toMatchObject({ live: true, size: 1 });
    expect(server.subscriptions).toHaveLength(1);
  });
});

describe('caching verifier: losing the feed', () => {
  it('after 2.5 heartbeat intervals of silence: empties the cache, asks the server, subscribes again', async () => {
    await primedVerifier();

    server.heartbeats = false;
    const silentSince = performance.now();
    await waitFor(() => verifier.cache?.live === false, 2_000, 'the feed to be lost');
    const lostAfter = performance.now() - silentSince;
    expect(verifier.cache?.size).toBe(0);
    await verifier.keys.verify(SECRET);

    expect(lostAfter).toBeGreaterThanOrEqual(150); // 250 ms after the last event, which came at most 100 ms earlier
    expect(lostAfter).toBeLessThan(1_000);
    expect(server.verifications).toEqual([SECRET, SECRET]);
    server.heartbeats = true;
    await waitFor(() => server.subscriptions.length === 2, 5_000, 'a new subscription');
  });

  it('when the server ends the stream: empties the cache at once and subscribes again, starting empty', async () => {
    await primedVerifier();

    server.endStreams();
    await waitFor(() => verifier.cache?.live === false, 2_000, 'the feed to be lost');
    expect(verifier.cache?.size).toBe(0);
    await waitFor(() => verifier.cache?.live === true, 5_000, 'the feed to be live again');
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);

    expect(server.subscriptions).toHaveLength(2);
    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('does not remember an answer that was on its way when the feed was lost', async () => {
    cachingVerifier();
    await waitFor(() => verifier.cache?.live === true);
    let release = () => {};
    server.holdVerifications = new Promise((resolve) => {
      release = resolve;
    });
    const answer = verifier.keys.verify(SECRET);
    await waitFor(() => server.verifications.length === 1);

    server.endStreams();
    await waitFor(() => verifier.cache?.live === false);
    await waitFor(() => verifier.cache?.live === true, 5_000, 'the feed to be live again');
    release();
    await answer;

    expect(verifier.cache?.size).toBe(0);
  });

  it('keeps subscribing after refusals, backing off, and honours retry-after', async () => {
    server.nextSubscriptions = [{ status: 503 }, { status: 503 }, { status: 503, retryAfter: '1' }];
    const started = performance.now();
    cachingVerifier();

    await waitFor(() => verifier.cache?.live === true, 10_000, 'the feed to be live');

    const elapsed = performance.now() - started;
    expect(server.subscriptions).toHaveLength(4);
    // 250 ms and 500 ms of backoff (less up to a quarter of jitter), then the second that retry-after asked for.
    expect(elapsed).toBeGreaterThanOrEqual(560 + 1_000);
    expect(verifier.cache?.size).toBe(0);
  });

  it('keeps subscribing after server errors, each delay about twice the last', async () => {
    server.nextSubscriptions = [{ status: 500 }, { status: 500 }, { status: 500 }];
    cachingVerifier();

    await waitFor(() => verifier.cache?.live === true, 10_000, 'the feed to be live');

    const times = server.subscriptionTimes;
    const gaps = times.slice(1).map((time, i) => time - (times[i] ?? 0));
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(0.75 * 250 * 2 ** i - 5);
      expect(gap).toBeLessThan(250 * 2 ** i + 250);
    });
  });
});

describe('caching verifier: renewing a subscription before the server ends it', () => {
  /** Whether the feed stayed live, sampled every 10 ms, for `ms`. */
  async function liveThroughout(ms: number): Promise<boolean> {
    const until = performance.now() + ms;
    let live = true;
    while (performance.now() < until) {
      live &&= verifier.cache?.live === true;
      await sleep(10);
    }
    return live;
  }

  it('subscribes again before the announced end, keeps both until the old one ends, and keeps its memory', async () => {
    server.lifetimeMs = 2_500;
    await primedVerifier();

    const stayedLive = await liveThroughout(5_500);
    await verifier.keys.verify(SECRET);

    expect(stayedLive).toBe(true);
    expect(server.subscriptions.length).toBeGreaterThanOrEqual(3);
    expect(server.mostOpenStreams).toBe(2);
    expect(verifier.cache?.size).toBe(1);
    expect(server.verifications).toEqual([SECRET]);
  });

  it('still hears a change sent on either subscription while both are open', async () => {
    server.lifetimeMs = 1_000;
    server.keepPastLifetime = true;
    await primedVerifier();
    await waitFor(() => server.openStreams === 2, 5_000, 'the renewal');

    server.send({ type: 'api_key_changed', api_key_id: keyId(1), change: 'updated' });
    await waitFor(() => verifier.cache?.size === 0, 2_000, 'the change to be heard');

    expect(verifier.cache?.live).toBe(true);
  });

  it('tries the renewal again when refused, and keeps its memory once one is live before the end', async () => {
    server.lifetimeMs = 4_000;
    server.nextSubscriptions = ['subscribe', { status: 429, retryAfter: '0' }, { status: 503 }];
    await primedVerifier();

    const stayedLive = await liveThroughout(4_200);

    expect(stayedLive).toBe(true);
    expect(server.subscriptions.length).toBeGreaterThanOrEqual(4);
    expect(verifier.cache?.size).toBe(1);
  });

  it('forgets everything when no renewal was live before the old subscription ended', async () => {
    server.lifetimeMs = 800;
    server.nextSubscriptions = ['subscribe', ...Array.from({ length: 20 }, () => ({ status: 429 }))];
    await primedVerifier();

    await waitFor(() => verifier.cache?.live === false, 3_000, 'the feed to be lost');

    expect(verifier.cache?.size).toBe(0);
  });

  it('forgets everything when the old subscription ends within a second of the new one', async () => {
    server.lifetimeMs = 1_000;
    server.keepPastLifetime = true;
    await primedVerifier();
    await waitFor(() => server.openStreams === 2, 5_000, 'the renewal');
    await sleep(50); // the renewal's subscribed has arrived

    server.endOldestStream();
    await waitFor(() => verifier.cache?.size === 0, 2_000, 'the memory to be forgotten');

    expect(verifier.cache?.live).toBe(true);
    expect(server.subscriptions).toHaveLength(2);
  });
});

describe('caching verifier: close', () => {
  it('ends the subscription, subscribes no more, and sends verifications to the server', async () => {
    await primedVerifier();

    await verifier.close();
    await waitFor(() => server.openStreams === 0, 2_000, 'the stream to be closed');
    await sleep(400);
    await verifier.keys.verify(SECRET);

    expect(server.subscriptions).toHaveLength(1);
    expect(verifier.cache).toMatchObject({ live: false, size: 0 });
    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('can be called twice, and stops the resubscription loop while it waits', async () => {
    server.nextSubscriptions = [{ status: 503, retryAfter: '30' }];
    cachingVerifier();
    await waitFor(() => server.subscriptions.length === 1);

    const started = performance.now();
    await Promise.all([verifier.close(), verifier.close()]);

    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.subscriptions).toHaveLength(1);
  });
});
