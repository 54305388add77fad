import { ApiKeysError } from '../errors.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../transport.js';
import { FeedLost, FeedStream, type FeedStreamOptions, unrefTimer } from './feed-stream.js';

export { SILENCE_INTERVALS } from './feed-stream.js';

/** What a subscriber hears from the feed. */
export interface ChangeFeedListener {
  /**
   * The feed is live, and every change from now on will be heard; changes made before may have been missed. Not
   * called when a subscription is renewed before it ends (nothing was missed).
   */
  subscribed(): void;
  /** `api_key_changed`: what the server answers for that key's secrets may have changed. */
  keyChanged(apiKeyId: string): void;
  /** `reset`, or an event that cannot be read: anything may have changed. */
  reset(): void;
  /** The live feed was lost (silence, end of stream, error): changes may go unheard until the next `subscribed`. */
  lost(reason: unknown): void;
}

/** How the feed subscribes and how patient it is. */
export type ChangeFeedOptions = FeedStreamOptions;

/** The first delay before subscribing again; it doubles at each failure in a row. */
const RETRY_BASE_DELAY_MS = 250;
/** The cap of that delay (a `retry-after` from the server may ask for longer, up to `MAX_RETRY_AFTER_MS`). */
const RETRY_MAX_DELAY_MS = 5_000;
/**
 * How long before a subscription's announced end its successor is asked for, at least: time to subscribe (and to try
 * again) while the old one still hears every change.
 */
const RENEWAL_LEAD_MS = 10_000;
/**
 * How long the old subscription must stay live after its successor said `subscribed`: a change reaches every
 * server's subscribers within a second, so one committed just before the successor's registration reaches the old
 * one within this. An old one that ends sooner may have missed it: everything is forgotten instead.
 */
const HANDOVER_MS = 1_000;

/**
 * A subscription to the change feed that keeps itself live until `close()`. Before a subscription's announced end
 * (`ends_in_ms`), it subscribes again and keeps both until the old one ends: once the new one is live and the old
 * one outlived it by the propagation bound, nothing was missed, and the listener hears nothing of the renewal.
 * Whenever the feed is lost all the same, it subscribes again, with backoff and jitter, and the listener hears it.
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  readonly #listener: ChangeFeedListener;
  readonly #streams = new Set<FeedStream>();
  #closed = false;
  #failuresInARow = 0;
  /** The subscription that said `subscribed` last: the one a renewal takes over from, and the feed follows. */
  #newest: FeedStream | undefined;
  /** The renewal of the newest subscription, on its way (not yet live), if any. */
  #next: FeedStream | undefined;
  #renewal: ReturnType<typeof setTimeout> | undefined;
  /** A renewal whose time came while an older subscription was still open: asked for once that one ends. */
  #due: (() => void) | undefined;
  #wakeUp: (() => void) | undefined;
  #running: Promise<void> | undefined;

  constructor(options: ChangeFeedOptions, listener: ChangeFeedListener) {
    this.#options = options;
    this.#listener = listener;
  }

  /** Whether the feed is live now. */
  get live(): boolean {
    return [...this.#streams].some((stream) => stream.live);
  }

  /** Starts subscribing (once). */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Ends the subscriptions and stops subscribing again; resolves once the connections are let go. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#renewal);
    for (const stream of this.#streams) {
      stream.end(new FeedLost('the subscriber closed the feed'));
    }
    this.#wakeUp?.();
    await this.#running;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      const reason = await this.#follow();
      if (!this.#closed) {
        await this.#sleep(this.#retryDelay(reason));
      }
    }
  }

  /**
   * Subscribes, then follows the subscription and each successor that takes over from it, until the feed is lost:
   * resolves with why (the listener has heard `lost` if it was live).
   */
  async #follow(): Promise<unknown> {
    let current = this.#subscribe(undefined);
    for (;;) {
      const reason = await current.ended;
      const newest = this.#newest;
      if (newest !== undefined && newest !== current && newest.live && !this.#closed) {
        current = newest;
        this.#renewIfDue();
        continue;
      }
      clearTimeout(this.#renewal);
      this.#next?.end(new FeedLost('the subscription it was to renew ended first'));
      this.#next = undefined;
      if (current.wasLive) {
        this.#listener.lost(reason);
      }
      return reason;
    }
  }

  /** Opens a subscription; `predecessor` is the live one it renews, if any. */
  #subscribe(predecessor: FeedStream | undefined): FeedStream {
    const stream: FeedStream = new FeedStream(this.#options, {
      subscribed: (endsInMs) => {
        if (predecessor?.live) {
          this.#handOver(predecessor);
        } else {
          this.#listener.subscribed();
        }
        this.#newest = stream;
        if (this.#next === stream) {
          this.#next = undefined;
        }
        if (endsInMs !== undefined) {
          this.#scheduleRenewal(stream, performance.now() + endsInMs);
        }
      },
      keyChanged: (apiKeyId) => this.#listener.keyChanged(apiKeyId),
      reset: () => this.#listener.reset(),
      active: () => {
        this.#failuresInARow = 0;
      },
    });
    this.#streams.add(stream);
    void stream.ended.then(() => this.#streams.delete(stream));
    return stream;
  }

  /** The renewal is live: the old subscription must still outlive it by the propagation bound, or all is forgotten. */
  #handOver(predecessor: FeedStream): void {
    const handedOverAt = performance.now();
    void predecessor.ended.then(() => {
      if (performance.now() - handedOverAt < HANDOVER_MS && !this.#closed) {
        this.#listener.reset();
      }
    });
  }

  /**
   * Asks for a successor of `stream` ahead of `endsAt`, and again (while time is left) if that one is refused. A
   * subscriber holds two subscriptions at most: one that comes due while an older one is still open waits for it.
   */
  #scheduleRenewal(stream: FeedStream, endsAt: number, delayMs?: number): void {
    const lead = Math.max(RENEWAL_LEAD_MS, 2 * this.#options.connectTimeoutMs + HANDOVER_MS);
    const untilEnd = endsAt - performance.now();
    // Asked for at the lead before the end, or half way to it for a short subscription (the old and the new then
    // overlap by half a lifetime, and each renewal comes due as its predecessor ends).
    const wait = delayMs ?? Math.max(0, untilEnd - Math.min(lead, untilEnd / 2));
    clearTimeout(this.#renewal);
    this.#due = undefined;
    const renew = () => {
      this.#due = undefined;
      if (this.#closed || !stream.live || this.#newest !== stream || this.#next !== undefined) {
        return;
      }
      if (this.#streams.size > 1) {
        this.#due = renew;
        return;
      }
      const next = this.#subscribe(stream);
      this.#next = next;
      void next.ended.then((reason) => {
        if (this.#next === next) {
          // Refused or lost before it was live: try again, sooner than the end, while the old one still hears.
          this.#next = undefined;
          const left = endsAt - performance.now();
          if (stream.live && left > HANDOVER_MS) {
            this.#scheduleRenewal(stream, endsAt, Math.min(this.#retryDelay(reason), left / 4));
          }
        }
      });
    };
    this.#renewal = setTimeout(renew, wait);
    unrefTimer(this.#renewal);
  }

  /** Asks for the renewal that came due while the subscription the feed now follows was not yet alone. */
  #renewIfDue(): void {
    this.#due?.();
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
