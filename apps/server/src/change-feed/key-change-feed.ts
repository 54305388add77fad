import { type API_VERSION_NAMES, CHANGE_FEED, type SchemasOf } from '@apikeys/api-types';
import type { CredentialRef, KeyChangeEvent, Store } from '@apikeys/store';
import type { Logger } from 'pino';
import { RefusalWarnings } from './refusal-warnings.js';
import { type QuotaReached, SubscriptionCounts, type SubscriptionOwner } from './subscription-counts.js';

export type { SubscriptionOwner } from './subscription-counts.js';

/** One event of the change feed, as the spec writes it (`KeyChangeFeedEvent`). */
export type KeyChangeFeedEvent = SchemasOf<typeof API_VERSION_NAMES.v2026_10_21>['KeyChangeFeedEvent'];

/** Why a subscription ended. */
export type SubscriptionEnd =
  /** The subscriber went away (it closed the connection). */
  | 'client_closed'
  /** The subscriber did not read: its unread events passed `CHANGE_FEED.maxUnreadBytes`. */
  | 'slow'
  /** Its lifetime passed (`ends_in_ms` of its `subscribed` event): ended cleanly, once it had subscribed again. */
  | 'lifetime'
  /** The server is shutting down. */
  | 'shutdown'
  /** The server lost the connection that brings other processes' changes: it could no longer promise them. */
  | 'notifications_lost'
  /** The caller's own admin or verifier key changed (disabled, say): it subscribes again, and is authenticated anew. */
  | 'credential_changed';

/** Why a subscription was refused: the process's limit, a tenant's quota, or the state of the feed. */
export type SubscriptionRefusal = 'limit' | QuotaReached | 'shutdown' | 'notifications_lost';

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

/** A live subscription, which its transport cancels when the subscriber goes away. */
export interface Subscription {
  cancel(): void;
}

/** The limits of one process's feed. */
export interface ChangeFeedSettings {
  /** Subscriptions this process holds at most; past it, new ones are refused (503). */
  maxSubscriptions: number;
  /** Subscriptions one admin or verifier key may hold in this process; past it, its new ones are refused (429). */
  maxPerCredential: number;
  /** Subscriptions one organization's keys may hold in this process together; past it, refused (429). */
  maxPerOrganization: number;
  /** The longest a subscription lasts; each one's lifetime is this, shortened by up to a tenth at random. */
  maxLifetimeMs: number;
}

export const DEFAULT_CHANGE_FEED: Readonly<ChangeFeedSettings> = {
  maxSubscriptions: 1_000,
  maxPerCredential: 50,
  maxPerOrganization: 100,
  maxLifetimeMs: 15 * 60_000,
};

/** The share of a lifetime taken off at random, so that subscribers made at once do not all end at once. */
const LIFETIME_JITTER = 0.1;

/** Which credentials are still active: the store's answer, asked when changes to them may have gone unheard. */
export type ActiveCredentials = (credentials: readonly CredentialRef[]) => Promise<CredentialRef[]>;

interface Entry {
  owner: SubscriptionOwner;
  subscriber: FeedSubscriber;
  /** When (`performance.now()`) the subscription's lifetime ends: the first heartbeat after it ends it instead. */
  endsAt: number;
}

/**
 * The change feed of one server process: it hears every change to keys the store announces (this process's at once,
 * the other replicas' through the database's notifications) and passes each API key's change on to the subscribers
 * of that key's organization only. Bounded: at most `maxSubscriptions` at once, quotas per credential and per
 * organization within those, a lifetime per subscription, and a subscriber too far behind is dropped
 * (`FeedSubscriber.send`). A heartbeat goes to every subscriber each interval, so that it can tell a quiet feed from
 * a dead one; the same tick ends the subscriptions whose lifetime has passed. When the store's notifications are
 * lost, every subscription ends and new ones are refused until they are back: a subscriber then stops trusting what
 * it remembered, rather than trust a feed that went deaf. When changes may have gone unheard (`reset`), the
 * subscribers' own credentials are read again, and those no longer active are ended.
 */
export class KeyChangeFeed {
  readonly #byOrganization = new Map<string, Set<Entry>>();
  readonly #counts: SubscriptionCounts;
  readonly #warnings: RefusalWarnings<SubscriptionRefusal>;
  #count = 0;
  #state: 'live' | 'lost' | 'closed' = 'live';
  readonly #heartbeat: NodeJS.Timeout;
  /** The reading of the subscribers' credentials on its way, and whether another must follow it. */
  #checking: Promise<void> | undefined;
  #checkAgain = false;

  constructor(
    readonly settings: Readonly<ChangeFeedSettings>,
    private readonly logger: Logger,
    private readonly activeCredentials: ActiveCredentials,
    private readonly counters?: ChangeFeedCounters,
  ) {
    this.#counts = new SubscriptionCounts(settings);
    this.#warnings = new RefusalWarnings(logger);
    this.#heartbeat = setInterval(() => this.#tick(), CHANGE_FEED.heartbeatIntervalMs);
    this.#heartbeat.unref();
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.#count;
  }

  /**
   * Why a subscription of `owner` would be refused now (counted, and warned of at most once per interval), or
   * undefined when `subscribe` would take it: the server asks before it answers, so that a refusal is an error
   * response rather than a stream that ends at once.
   */
  refusal(owner: SubscriptionOwner): SubscriptionRefusal | undefined {
    const refusal: SubscriptionRefusal | undefined =
      this.#state === 'closed'
        ? 'shutdown'
        : this.#state === 'lost'
          ? 'notifications_lost'
          : this.#count >= this.settings.maxSubscriptions
            ? 'limit'
            : this.#counts.reached(owner);
    if (refusal) {
      this.counters?.countSubscriptionRefused(refusal);
      this.#warnings.refused(refusal);
    }
    return refusal;
  }

  /**
   * Subscribes `subscriber` to the changes of `owner`'s organization, sending `subscribed` first; or, when `refusal`
   * says no, ends it at once. The subscription is registered before `subscribed` is sent, so no change committed
   * after it is missed.
   */
  subscribe(owner: SubscriptionOwner, subscriber: FeedSubscriber): Subscription {
    if (this.refusal(owner)) {
      subscriber.end();
      return { cancel: () => {} };
    }
    const lifetimeMs = Math.max(1, Math.round(this.settings.maxLifetimeMs * (1 - LIFETIME_JITTER * Math.random())));
    const entry: Entry = { owner, subscriber, endsAt: performance.now() + lifetimeMs };
    let subscribers = this.#byOrganization.get(owner.organizationId);
    if (!subscribers) {
      subscribers = new Set();
      this.#byOrganization.set(owner.organizationId, subscribers);
    }
    subscribers.add(entry);
    this.#counts.add(owner);
    this.#count += 1;
    this.#send(entry, {
      type: 'subscribed',
      heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs,
      ends_in_ms: lifetimeMs,
    });
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
      // What changed is unknown: a subscriber's own key may have been disabled meanwhile.
      void this.checkCredentials();
      return;
    }
    const { change } = event;
    if (change.organizationId === undefined) {
      // Announced by a process of an earlier release: whose key it is cannot be told, so everyone forgets everything.
      this.#broadcast({ type: 'reset' });
      void this.checkCredentials();
      return;
    }
    for (const entry of [...(this.#byOrganization.get(change.organizationId) ?? [])]) {
      if (change.kind === 'api_key') {
        this.#send(entry, { type: 'api_key_changed', api_key_id: change.id, change: change.change });
      } else if (entry.owner.credential.kind === change.kind && entry.owner.credential.id === change.id) {
        this.#end(entry, 'credential_changed');
      }
    }
  }

  /**
   * Reads every subscriber's credential again, and ends the subscriptions of those no longer active. Calls that come
   * while a reading is on its way share the one that follows it (a burst of resets costs two readings). A reading
   * that fails ends nothing (the next reset reads again) and is logged.
   */
  checkCredentials(): Promise<void> {
    if (this.#checking) {
      this.#checkAgain = true;
      return this.#checking;
    }
    this.#checking = (async () => {
      do {
        this.#checkAgain = false;
        await this.#endInactiveCredentials();
      } while (this.#checkAgain && this.#state !== 'closed');
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /** Ends every subscription and refuses new ones: the server is shutting down. */
  close(): void {
    clearInterval(this.#heartbeat);
    this.#state = 'closed';
    this.#endAll('shutdown');
  }

  async #endInactiveCredentials(): Promise<void> {
    const entries = [...this.#byOrganization.values()].flatMap((subscribers) => [...subscribers]);
    if (entries.length === 0) {
      return;
    }
    let active: CredentialRef[];
    try {
      active = await this.activeCredentials(entries.map((entry) => entry.owner.credential));
    } catch (error) {
      this.logger.warn(
        { detail: error instanceof Error ? error.message : String(error) },
        "change feed: could not read the subscribers' credentials again; they are read at the next reset",
      );
      return;
    }
    const stillActive = new Set(active.map(({ kind, id }) => `${kind}:${id}`));
    for (const entry of entries) {
      const { kind, id } = entry.owner.credential;
      if (!stillActive.has(`${kind}:${id}`)) {
        this.#end(entry, 'credential_changed');
      }
    }
  }

  /** Each heartbeat interval: ends the subscriptions whose lifetime has passed, and sends the others a heartbeat. */
  #tick(): void {
    const now = performance.now();
    for (const subscribers of [...this.#byOrganization.values()]) {
      for (const entry of [...subscribers]) {
        if (now >= entry.endsAt) {
          this.#end(entry, 'lifetime');
        } else {
          this.#send(entry, { type: 'heartbeat' });
        }
      }
    }
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
      this.#end(entry, 'slow');
    }
  }

  #endAll(reason: SubscriptionEnd): void {
    for (const subscribers of [...this.#byOrganization.values()]) {
      for (const entry of [...subscribers]) {
        this.#end(entry, reason);
      }
    }
  }

  /** Ends `entry` from the server's side, once. */
  #end(entry: Entry, reason: SubscriptionEnd): void {
    if (this.#remove(entry, reason)) {
      entry.subscriber.end();
    }
  }

  /**
   * Forgets `entry` once, whoever asks first: the feed ending it, or its transport seeing the subscriber go. Returns
   * whether it was still there.
   */
  #remove(entry: Entry, reason: SubscriptionEnd): boolean {
    const subscribers = this.#byOrganization.get(entry.owner.organizationId);
    if (!subscribers?.delete(entry)) {
      return false;
    }
    if (subscribers.size === 0) {
      this.#byOrganization.delete(entry.owner.organizationId);
    }
    this.#counts.remove(entry.owner);
    this.#count -= 1;
    this.counters?.countSubscriptionEnded(reason);
    return true;
  }
}

/**
 * The change feed of a server on `store`: resolves once it hears the store's changes (it throws when the store
 * cannot listen), with the feed and the function that stops listening.
 */
export async function startKeyChangeFeed(
  store: Pick<Store, 'watchKeyChanges' | 'findActiveCredentials'>,
  settings: ChangeFeedSettings,
  logger: Logger,
  counters?: ChangeFeedCounters,
): Promise<{ feed: KeyChangeFeed; stop: () => Promise<void> }> {
  const feed = new KeyChangeFeed(settings, logger, (credentials) => store.findActiveCredentials(credentials), counters);
  const stop = await store.watchKeyChanges((event) => feed.hear(event));
  return {
    feed,
    stop: async () => {
      feed.close();
      await stop();
    },
  };
}
