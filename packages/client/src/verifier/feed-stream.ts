import { CHANGE_FEED } from '@apikeys/api-types';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { untilAborted } from '../transport.js';

/** The feed is lost when nothing was heard for this many heartbeat intervals. */
export const SILENCE_INTERVALS = 2.5;

/** Lets a timer not keep a Node process alive (browsers have no such notion). */
export function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}

/** Why a subscription ended without the server saying anything. */
export class FeedLost extends Error {
  override readonly name = 'FeedLost';
}

/** What one subscription tells its owner. */
export interface FeedStreamEvents {
  /** `subscribed` arrived: live from now on, until `endsInMs` (the server's `ends_in_ms`; undefined if not sent). */
  subscribed(endsInMs: number | undefined): void;
  /** `api_key_changed`. */
  keyChanged(apiKeyId: string): void;
  /** `reset`, or a change that names no key: anything may have changed. */
  reset(): void;
  /** A heartbeat or a change: the server is answering. */
  active(): void;
}

/** How a subscription is opened and how long its `subscribed` may take. */
export interface FeedStreamOptions {
  /** Sends `GET /v1/keys/changes` and resolves with the event stream; rejects with an `ApiKeysError` if refused. */
  open(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** How long to wait for `subscribed` after asking. */
  connectTimeoutMs: number;
}

/**
 * One subscription to the change feed, from asking to its end: live between `subscribed` and the first of
 * `2.5 × heartbeat_interval_ms` without any event, the end of the stream, an error, or `end()`. `ended` resolves
 * with why it ended (it never rejects).
 */
export class FeedStream {
  readonly ended: Promise<unknown>;
  #live = false;
  #wasLive = false;
  #silenceLimitMs = 0;
  readonly #controller = new AbortController();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #watchdog: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly options: FeedStreamOptions,
    private readonly events: FeedStreamEvents,
  ) {
    this.ended = this.#run().then(
      (reason) => reason,
      (error: unknown) => error,
    );
    void this.ended.then(() => clearTimeout(this.#watchdog));
  }

  /** Whether `subscribed` has arrived and the stream has not ended. */
  get live(): boolean {
    return this.#live;
  }

  /** Whether `subscribed` ever arrived. */
  get wasLive(): boolean {
    return this.#wasLive;
  }

  /** Ends the subscription now. */
  end(reason: Error): void {
    this.#live = false;
    clearTimeout(this.#watchdog);
    this.#controller.abort(reason);
    this.#reader?.cancel(reason).catch(() => {});
  }

  async #run(): Promise<unknown> {
    const { signal } = this.#controller;
    const { connectTimeoutMs } = this.options;
    this.#arm(connectTimeoutMs, `no subscribed event within ${connectTimeoutMs} ms`);
    const opening = this.options.open(signal);
    // Bounded by the watchdog even with a fetch that ignores the signal; a stream that comes too late is let go.
    opening.then(
      (late) => {
        if (signal.aborted) {
          late.cancel().catch(() => {});
        }
      },
      () => {},
    );
    const stream = await untilAborted(opening, signal);
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
        if (done || signal.aborted) {
          return signal.aborted ? signal.reason : new FeedLost('the server ended the stream');
        }
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      // At once, not when `ended` resolves: a successor asks whether this one was still live when it subscribed.
      this.#live = false;
      this.#reader = undefined;
      reader.cancel().catch(() => {});
    }
  }

  #onMessage(message: EventSourceMessage): void {
    let event: { type?: unknown; api_key_id?: unknown; heartbeat_interval_ms?: unknown; ends_in_ms?: unknown };
    try {
      event = JSON.parse(message.data);
    } catch {
      event = {};
    }
    const type = message.event ?? event.type;
    if (this.#silenceLimitMs === 0 && type !== 'subscribed') {
      this.end(new FeedLost(`the feed began with ${String(type)}, not subscribed`));
      return;
    }
    switch (type) {
      case 'subscribed': {
        const interval = event.heartbeat_interval_ms;
        const heartbeatMs = typeof interval === 'number' && interval > 0 ? interval : CHANGE_FEED.heartbeatIntervalMs;
        this.#silenceLimitMs = SILENCE_INTERVALS * heartbeatMs;
        this.#live = true;
        this.#wasLive = true;
        const endsIn = event.ends_in_ms;
        this.events.subscribed(typeof endsIn === 'number' && endsIn > 0 ? endsIn : undefined);
        break;
      }
      case 'api_key_changed':
        // Whatever the kind of change, even one this client does not know: forget the key.
        if (typeof event.api_key_id === 'string') {
          this.events.keyChanged(event.api_key_id);
        } else {
          this.events.reset();
        }
        this.events.active();
        break;
      case 'reset':
        this.events.reset();
        break;
      case 'heartbeat':
        this.events.active();
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

  /** Ends the subscription with `reason` once `ms` pass with nothing heard. */
  #arm(ms: number, reason: string): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => this.end(new FeedLost(reason)), ms);
    unrefTimer(this.#watchdog);
  }
}
