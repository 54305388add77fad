import { type API_VERSION_NAMES, CHANGE_FEED, type SchemasOf } from '@apikeys/api-types';
import type { KeyChangeEvent, KeyRef, Store } from '@apikeys/store';
import type { Logger } from 'pino';

/** One event of the change feed, as the spec writes it (`KeyChangeFeedEvent`). */
export type KeyChangeFeedEvent = SchemasOf<typeof API_VERSION_NAMES.v2026_10_21>['KeyChangeFeedEvent'];

/** Why a subscription ended. */
export type SubscriptionEnd =
  /** The subscriber went away (it closed the connection). */
  | 'client_closed'
  /** The subscriber did not read: its unread events passed `CHANGE_FEED.maxUnreadBytes`. */
  | 'slow'
  /** The server is shutting down. */
  | 'shutdown'
  /** The server lost the connection that brings other processes' changes: it could no longer promise them. */
  | 'notifications_lost'
  /** The caller's own admin or verifier key changed (disabled, say): it subscribes again, and is authenticated anew. */
  | 'credential_changed';

/** Why a subscription was refused. */
export type SubscriptionRefusal = 'limit' | 'shutdown' | 'notifications_lost';

/** Where the feed counts what happens to its subscriptions (the server's metrics). */
export interface ChangeFeedCounters {
  countSubscriptionEnded(reason: SubscriptionEnd): void;
  countSubscriptionRefused(reason: SubscriptionRefusal): void;
}

/** The receiving end of one subscription: an HTTP response, for the server. */
export interface FeedSubscriber {
  /** Sends one event; returns false when the subscriber is too far behind and must be dropped. */
  send(event: KeyChangeFeedEvent): boolean;
  /** Ends the subscription from the server's side. */
  end(): void;
}

/** Who subscribes: the organization whose keys it hears of, and the key it authenticated with. */
export interface SubscriptionOwner {
  organizationId: string;
  credential: KeyRef;
}

/** A live subscription, which its transport cancels when the subscriber goes away. */
export interface Subscription {
  cancel(): void;
}

/** The limits of one process's feed. */
export interface ChangeFeedSettings {
  /** Subscriptions this process holds at most; past it, new ones are refused. */
  maxSubscriptions: number;
}

export const DEFAULT_MAX_SUBSCRIPTIONS = 1_000;

interface Entry {
  owner: SubscriptionOwner;
  subscriber: FeedSubscriber;
}

/**
 * The change feed of one server process: it hears every change to keys the store announces (this process's at once,
 * the other replicas' through the database's notifications) and passes each API key's change on to the subscribers
 * of that key's organization only. Bounded: at most `maxSubscriptions` at once, and a subscriber too far behind is
 * dropped (`FeedSubscriber.send`). A heartbeat goes to every subscriber each interval, so that it can tell a quiet
 * feed from a dead one. When the store's notifications are lost, every subscription ends and new ones are refused
 * until they are back: a subscriber then stops trusting what it remembered, rather than trust a feed that went deaf.
 */
export class KeyChangeFeed {
  readonly #byOrganization = new Map<string, Set<Entry>>();
  #count = 0;
  #state: 'live' | 'lost' | 'closed' = 'live';
  readonly #heartbeat: NodeJS.Timeout;

  constructor(
    private readonly settings: ChangeFeedSettings,
    private readonly logger: Logger,
    private readonly counters?: ChangeFeedCounters,
  ) {
    this.#heartbeat = setInterval(() => this.#broadcast({ type: 'heartbeat' }), CHANGE_FEED.heartbeatIntervalMs);
    this.#heartbeat.unref();
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.#count;
  }

  /**
   * Why a subscription would be refused now (counted as refused), or undefined when `subscribe` would take it: the
   * server asks before it answers, so that a refusal is an error response rather than a stream that ends at once.
   */
  refusal(): SubscriptionRefusal | undefined {
    const refusal: SubscriptionRefusal | undefined =
      this.#state === 'closed'
        ? 'shutdown'
        : this.#state === 'lost'
          ? 'notifications_lost'
          : this.#count >= this.settings.maxSubscriptions
            ? 'limit'
            : undefined;
    if (refusal) {
      this.counters?.countSubscriptionRefused(refusal);
    }
    return refusal;
  }

  /**
   * Subscribes `subscriber` to the changes of `owner`'s organization, sending `subscribed` first; or, when `refusal`
   * says no, ends it at once. The subscription is registered before `subscribed` is sent, so no change committed
   * after it is missed.
   */
  subscribe(owner: SubscriptionOwner, subscriber: FeedSubscriber): Subscription {
    if (this.refusal()) {
      subscriber.end();
      return { cancel: () => {} };
    }
    const entry: Entry = { owner, subscriber };
    let subscribers = this.#byOrganization.get(owner.organizationId);
    if (!subscribers) {
      subscribers = new Set();
      this.#byOrganization.set(owner.organizationId, subscribers);
    }
    subscribers.add(entry);
    this.#count += 1;
    this.#send(entry, { type: 'subscribed', heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs });
    return { cancel: () => this.#remove(entry, 'client_closed') };
  }

  /** Passes on what the store announced (see `KeyChangeEvent`). */
  hear(event: KeyChangeEvent): void {
    if (event.type === 'lost') {
      if (this.#state === 'live') {
        this.#state = 'lost';
        this.logger.warn('change feed: the database notifications are lost; subscriptions ended until they are back');
        this.#endAll('notifications_lost');
      }
      return;
    }
    if (event.type === 'reset') {
      if (this.#state === 'lost') {
        this.#state = 'live';
      }
      this.#broadcast({ type: 'reset' });
      return;
    }
    const { change } = event;
    if (change.organizationId === undefined) {
      // Announced by a process of an earlier release: whose key it is cannot be told, so everyone forgets everything.
      this.#broadcast({ type: 'reset' });
      return;
    }
    for (const entry of [...(this.#byOrganization.get(change.organizationId) ?? [])]) {
      if (change.kind === 'api_key') {
        this.#send(entry, { type: 'api_key_changed', api_key_id: change.id, change: change.change });
      } else if (entry.owner.credential.kind === change.kind && entry.owner.credential.id === change.id) {
        this.#remove(entry, 'credential_changed');
        entry.subscriber.end();
      }
    }
  }

  /** Ends every subscription and refuses new ones: the server is shutting down. */
  close(): void {
    clearInterval(this.#heartbeat);
    this.#state = 'closed';
    this.#endAll('shutdown');
  }

  #broadcast(event: KeyChangeFeedEvent): void {
    for (const subscribers of [...this.#byOrganization.values()]) {
      for (const entry of [...subscribers]) {
        this.#send(entry, event);
      }
    }
  }

  #send(entry: Entry, event: KeyChangeFeedEvent): void {
    if (!entry.subscriber.send(event)) {
      this.#remove(entry, 'slow');
      entry.subscriber.end();
    }
  }

  #endAll(reason: SubscriptionEnd): void {
    for (const subscribers of [...this.#byOrganization.values()]) {
      for (const entry of [...subscribers]) {
        this.#remove(entry, reason);
        entry.subscriber.end();
      }
    }
  }

  /** Forgets `entry` once, whoever asks first: the feed ending it, or its transport seeing the subscriber go. */
  #remove(entry: Entry, reason: SubscriptionEnd): void {
    const subscribers = this.#byOrganization.get(entry.owner.organizationId);
    if (!subscribers?.delete(entry)) {
      return;
    }
    if (subscribers.size === 0) {
      this.#byOrganization.delete(entry.owner.organizationId);
    }
    this.#count -= 1;
    this.counters?.countSubscriptionEnded(reason);
  }
}

/**
 * The change feed of a server on `store`: resolves once it hears the store's changes (it throws when the store
 * cannot listen), with the feed and the function that stops listening.
 */
export async function startKeyChangeFeed(
  store: Pick<Store, 'watchKeyChanges'>,
  settings: ChangeFeedSettings,
  logger: Logger,
  counters?: ChangeFeedCounters,
): Promise<{ feed: KeyChangeFeed; stop: () => Promise<void> }> {
  const feed = new KeyChangeFeed(settings, logger, counters);
  const stop = await store.watchKeyChanges((event) => feed.hear(event));
  return {
    feed,
    stop: async () => {
      feed.close();
      await stop();
    },
  };
}
