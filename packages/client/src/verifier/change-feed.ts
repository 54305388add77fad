import { CHANGE_FEED } from '@apikeys/api-types';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiKeysError } from '../errors.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, untilAborted } from '../transport.js';

/** What a subscriber hears from the feed. */
export interface ChangeFeedListener {
  /** `subscribed` arrived: the feed is live, and every change from now on will be heard. */
  subscribed(): void;
  /** `api_key_changed`: what the server answers for that key's secrets may have changed. */
  keyChanged(apiKeyId: string): void;
  /** `reset`, or an event that cannot be read: anything may have changed. */
  reset(): void;
  /** The live feed was lost (silence, end of stream, error): changes may go unheard until the next `subscribed`. */
  lost(reason: unknown): void;
}

/** How the feed subscribes and how patient it is. */
export interface ChangeFeedOptions {
  /** Sends `GET /v1/keys/changes` and resolves with the event stream; rejects with an `ApiKeysError` if refused. */
  open(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** How long to wait for `subscribed` after asking. */
  connectTimeoutMs: number;
}

/** The first delay before subscribing again; it doubles at each failure in a row. */
const RETRY_BASE_DELAY_MS = 250;
/** The cap of that delay (a `retry-after` from the server may ask for longer, up to `MAX_RETRY_AFTER_MS`). */
const RETRY_MAX_DELAY_MS = 5_000;

/** The feed is lost when nothing was heard for this many heartbeat intervals. */
export const SILENCE_INTERVALS = 2.5;

/** Lets a timer not keep a Node process alive (browsers have no such notion). */
export function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}

/** Why a subscription ended without the server saying anything. */
class FeedLost extends Error {
  override readonly name = 'FeedLost';
}

/**
 * A subscription to the change feed that subscribes again by itself, with backoff and jitter, whenever it is lost,
 * until `close()`. It is live between `subscribed` and the first of: `2.5 × heartbeat_interval_ms` without any event,
 * the end of the stream, an error.
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  readonly #listener: ChangeFeedListener;
  #live = false;
  #closed = false;
  #failuresInARow = 0;
  #silenceLimitMs = 0;
  #controller: AbortController | undefined;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  #wakeUp: (() => void) | undefined;
  #running: Promise<void> | undefined;

  constructor(options: ChangeFeedOptions, listener: ChangeFeedListener) {
    this.#options = options;
    this.#listener = listener;
  }

  /** Whether the feed is live now. */
  get live(): boolean {
    return this.#live;
  }

  /** Starts subscribing (once). */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Ends the subscription and stops subscribing again; resolves once the connection is let go. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#end(new FeedLost('the subscriber closed the feed'));
    this.#wakeUp?.();
    await this.#running;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      let reason: unknown;
      try {
        reason = await this.#subscribeOnce();
      } catch (error) {
        reason = error;
      }
      clearTimeout(this.#watchdog);
      if (this.#live) {
        this.#live = false;
        this.#listener.lost(reason);
      }
      if (!this.#closed) {
        await this.#sleep(this.#retryDelay(reason));
      }
    }
  }

  /** One subscription, from asking to its end; resolves (or rejects) with why it ended. */
  async #subscribeOnce(): Promise<unknown> {
    const controller = new AbortController();
    this.#controller = controller;
    this.#silenceLimitMs = 0;
    this.#arm(this.#options.connectTimeoutMs, `no subscribed event within ${this.#options.connectTimeoutMs} ms`);
    const opening = this.#options.open(controller.signal);
    // Bounded by the watchdog even with a fetch that ignores the signal; a stream that comes too late is let go.
    opening.then(
      (late) => {
        if (controller.signal.aborted) {
          late.cancel().catch(() => {});
        }
      },
      () => {},
    );
    const stream = await untilAborted(opening, controller.signal);
    const reader = stream.getReader();
    this.#reader = reader;
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (message) => this.#onMessage(message),
      onComment: () => this.#heard(),
    });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || controller.signal.aborted) {
          return controller.signal.aborted ? controller.signal.reason : new FeedLost('the server ended the stream');
        }
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      this.#reader = undefined;
      reader.cancel().catch(() => {});
    }
  }

  #onMessage(message: EventSourceMessage): void {
    let event: { type?: unknown; api_key_id?: unknown; heartbeat_interval_ms?: unknown };
    try {
      event = JSON.parse(message.data);
    } catch {
      event = {};
    }
    const type = message.event ?? event.type;
    if (this.#silenceLimitMs === 0 && type !== 'subscribed') {
      this.#end(new FeedLost(`the feed began with ${String(type)}, not subscribed`));
      return;
    }
    switch (type) {
      case 'subscribed': {
        const interval = event.heartbeat_interval_ms;
        const heartbeatMs = typeof interval === 'number' && interval > 0 ? interval : CHANGE_FEED.heartbeatIntervalMs;
        this.#silenceLimitMs = SILENCE_INTERVALS * heartbeatMs;
        this.#live = true;
        this.#listener.subscribed();
        break;
      }
      case 'api_key_changed':
        // Whatever the kind of change, even one this client does not know: forget the key.
        if (typeof event.api_key_id === 'string') {
          this.#listener.keyChanged(event.api_key_id);
        } else {
          this.#listener.reset();
        }
        this.#failuresInARow = 0;
        break;
      case 'reset':
        this.#listener.reset();
        break;
      case 'heartbeat':
        this.#failuresInARow = 0;
        break;
      default:
        // A kind of event a later version may add: it says the feed is alive, nothing more.
        break;
    }
    this.#heard();
  }

  /** Something arrived: the silence starts again. */
  #heard(): void {
    if (this.#silenceLimitMs > 0) {
      this.#arm(this.#silenceLimitMs, `no event for ${this.#silenceLimitMs} ms`);
    }
  }

  /** Ends the current subscription with `reason` once `ms` pass with nothing heard. */
  #arm(ms: number, reason: string): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => this.#end(new FeedLost(reason)), ms);
    unrefTimer(this.#watchdog);
  }

  /** Ends the current subscription now. */
  #end(reason: Error): void {
    clearTimeout(this.#watchdog);
    this.#controller?.abort(reason);
    this.#reader?.cancel(reason).catch(() => {});
  }

  /** The delay before subscribing again: backoff with jitter, or the server's `retry-after` when longer. */
  #retryDelay(reason: unknown): number {
    const backoff = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** this.#failuresInARow);
    this.#failuresInARow += 1;
    const jittered = backoff * (1 - Math.random() * 0.25);
    const asked =
      reason instanceof ApiKeysError ? parseRetryAfter(reason.headers?.get('retry-after') ?? null) : undefined;
    return asked === undefined ? jittered : Math.max(jittered, Math.min(asked, MAX_RETRY_AFTER_MS));
  }

  /** Waits `ms`, or less if `close()` is called. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      unrefTimer(timer);
      this.#wakeUp = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
