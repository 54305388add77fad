import pgListen from 'pg-listen';
import { KEY_CHANGES_CHANNEL, parseKeyChangePayload } from '../key-changes.js';
import type { KeyChangeListener } from '../types.js';
import { connectDeadline } from './connection-deadlines.js';

// pg-listen is CommonJS with `exports.default`: Node's ESM loader hands over `module.exports`, a bundler may hand
// over `exports.default` itself.
type CreateSubscriber = (typeof pgListen)['default'];
const createPostgresSubscriber: CreateSubscriber =
  (pgListen as unknown as { default?: CreateSubscriber }).default ?? (pgListen as unknown as CreateSubscriber);

/** The statement that announces a change to the other processes: delivered to their listeners once it commits. */
export const NOTIFY_KEY_CHANGE = 'select pg_notify($1, $2)';

/** How often the listening connection checks that the server still answers (a frozen server sends no error). */
export const LISTEN_CHECK_INTERVAL_MS = 5_000;

/** How long to wait between attempts to reconnect the listening connection. */
export const LISTEN_RETRY_INTERVAL_MS = 500;

/**
 * Listens on one connection of its own for the changes other processes announce (`NOTIFY_KEY_CHANGE`), and calls
 * `listener` with each. A lost connection (an error, its end, or a check unanswered within `timeoutMs`) is
 * reconnected every `LISTEN_RETRY_INTERVAL_MS` for as long as it takes (pg-listen): `listener` hears `lost` when the
 * first attempt begins and `reset` once it is back, since the changes announced meanwhile were missed. The changes
 * announced by `origin` (this store, whose watchers heard them as they committed) are not heard twice. Resolves once
 * listening; rejects when the first connection cannot be made.
 */
export async function watchNotifications(
  url: string,
  timeoutMs: number,
  origin: string,
  listener: KeyChangeListener,
): Promise<() => Promise<void>> {
  const subscriber = createPostgresSubscriber(
    { connectionString: url, ...connectDeadline(timeoutMs), query_timeout: timeoutMs },
    {
      paranoidChecking: LISTEN_CHECK_INTERVAL_MS,
      retryInterval: LISTEN_RETRY_INTERVAL_MS,
      retryLimit: Number.POSITIVE_INFINITY,
      retryTimeout: Number.POSITIVE_INFINITY,
      // Payloads are `kind:id`, not JSON.
      parse: (payload: string) => payload,
    },
  );
  let connectedBefore = false;
  subscriber.events.on('connected', () => {
    if (connectedBefore) {
      listener({ type: 'reset' });
    }
    connectedBefore = true;
  });
  // pg-listen announces each attempt to reconnect, the first as soon as it finds the connection lost.
  subscriber.events.on('reconnect', (attempt: number) => {
    if (attempt === 1) {
      listener({ type: 'lost' });
    }
  });
  // A failed reconnection attempt is retried by pg-listen; without a listener, 'error' would crash the process.
  subscriber.events.on('error', () => {});
  subscriber.notifications.on(KEY_CHANGES_CHANNEL, (payload: string) => {
    const announced = parseKeyChangePayload(payload);
    if (announced && announced.origin !== origin) {
      listener({ type: 'changed', change: announced.change });
    }
  });
  try {
    await subscriber.connect();
    await subscriber.listenTo(KEY_CHANGES_CHANNEL);
  } catch (error) {
    await closeWithin(subscriber, timeoutMs);
    throw error;
  }
  return () => closeWithin(subscriber, timeoutMs);
}

/** Ends the listening connection, or gives up on it after `timeoutMs` (a frozen server never acknowledges the end). */
async function closeWithin(subscriber: { close(): Promise<void> }, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    subscriber.close().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}
