import { connect, type Socket } from 'node:net';
import { LATEST_API_VERSION } from '@apikeys/api-types';
import {
  CHANGES_PATH,
  parsePrometheusText,
  startTestServer,
  subscribeToChanges,
  type TestServer,
} from '@apikeys/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';

/** Opens a subscription on a raw socket and stops reading once the response has begun. */
async function stalledSubscriber(baseUrl: string, credential: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(
    `GET ${CHANGES_PATH} HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${credential}\r\n` +
      `vendor-version: ${LATEST_API_VERSION}\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();
  return socket;
}

describe('a change feed subscriber that does not read', () => {
  let server: TestServer;
  const metrics = new Metrics();

  beforeAll(async () => {
    server = await startTestServer({ metrics });
  });
  afterAll(() => server.close());

  it('is dropped once its unread events pass the bound, while a subscriber that reads gets every event', async () => {
    const organization = await server.createOrganization('slow readers');
    const stalled = await stalledSubscriber(server.baseUrl, organization.adminKey);
    const closed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
    const reader = await subscribeToChanges(server.baseUrl, organization.adminKey);
    await reader.next((event) => event.type === 'subscribed');
    const slowBefore = parsePrometheusText(await metrics.registry.metrics()).sum(
      'apikeys_change_feed_subscriptions_ended_total',
      { reason: 'slow' },
    );

    // Until the stalled subscriber is dropped: once the kernel's socket buffers are full, its unread events pass
    // CHANGE_FEED.maxUnreadBytes. Sent in small batches, so that the reader keeps up; the feed hears them as it
    // hears the store's changes.
    const sizeBefore = server.changeFeed.size;
    let sent = 0;
    const limit = 400_000;
    while (server.changeFeed.size === sizeBefore && sent < limit) {
      for (let n = 0; n < 200; n++, sent++) {
        const id = `apikey_${String(sent).padStart(24, '0')}`;
        server.changeFeed.hear({
          type: 'changed',
          change: { kind: 'api_key', id, organizationId: organization.id, change: 'updated' },
        });
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const last = `apikey_${String(sent - 1).padStart(24, '0')}`;
    await reader.next((event) => event.type === 'api_key_changed' && event.api_key_id === last, 30_000);
    stalled.resume();
    await closed;
    const after = parsePrometheusText(await metrics.registry.metrics());

    expect(sent).toBeLessThan(limit);
    expect(server.changeFeed.size).toBe(sizeBefore - 1);
    expect(after.sum('apikeys_change_feed_subscriptions_ended_total', { reason: 'slow' })).toBe(slowBefore + 1);
    expect(reader.events.filter((event) => event.type === 'api_key_changed')).toHaveLength(sent);
    expect(reader.isEnded).toBe(false);
    reader.close();
    stalled.destroy();
  }, 60_000);
});
