import { CHANGE_FEED } from '@apikeys/api-types';
import type { KeyChange } from '@apikeys/store';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type FeedSubscriber,
  KeyChangeFeed,
  type KeyChangeFeedEvent,
  type SubscriptionEnd,
  type SubscriptionRefusal,
} from '../../src/change-feed/key-change-feed.js';

const logger = pino({ level: 'silent' });

/** A subscriber that keeps what it is sent, and whether it was ended; `full` makes it report it cannot keep up. */
interface RecordingSubscriber extends FeedSubscriber {
  events: KeyChangeFeedEvent[];
  ended: boolean;
  full: boolean;
}

function recordingSubscriber(): RecordingSubscriber {
  const subscriber: RecordingSubscriber = {
    events: [] as KeyChangeFeedEvent[],
    ended: false,
    full: false,
    send(event: KeyChangeFeedEvent) {
      subscriber.events.push(event);
      return !subscriber.full;
    },
    end() {
      subscriber.ended = true;
    },
  };
  return subscriber;
}

function countingCounters() {
  const ended: SubscriptionEnd[] = [];
  const refused: SubscriptionRefusal[] = [];
  return {
    ended,
    refused,
    countSubscriptionEnded: (reason: SubscriptionEnd) => ended.push(reason),
    countSubscriptionRefused: (reason: SubscriptionRefusal) => refused.push(reason),
  };
}

const owner = (organizationId: string, id = 'vfykey_1') => ({
  organizationId,
  credential: { kind: 'verifier_key' as const, id },
});

const apiKeyChange = (organizationId: string | undefined, id: string, change: KeyChange['change'] = 'updated') => ({
  type: 'changed' as const,
  change: { kind: 'api_key' as const, id, organizationId, change },
});

describe('KeyChangeFeed', () => {
  const feeds: KeyChangeFeed[] = [];
  const newFeed = (maxSubscriptions = 10, counters = countingCounters()) => {
    const feed = new KeyChangeFeed({ maxSubscriptions }, logger, counters);
    feeds.push(feed);
    return { feed, counters };
  };
  afterEach(() => {
    for (const feed of feeds.splice(0)) {
      feed.close();
    }
    vi.useRealTimers();
  });

  it("sends subscribed first, then only the changes of the subscriber's organization", () => {
    const { feed } = newFeed();
    const ours = recordingSubscriber();
    const theirs = recordingSubscriber();
    feed.subscribe(owner('org_a'), ours);
    feed.subscribe(owner('org_b', 'vfykey_2'), theirs);

    feed.hear(apiKeyChange('org_b', 'apikey_b'));
    feed.hear(apiKeyChange('org_a', 'apikey_a', 'rotated'));

    expect(ours.events).toEqual([
      { type: 'subscribed', heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs },
      { type: 'api_key_changed', api_key_id: 'apikey_a', change: 'rotated' },
    ]);
    expect(theirs.events.at(-1)).toEqual({ type: 'api_key_changed', api_key_id: 'apikey_b', change: 'updated' });
  });

  it("tells everyone to forget everything on reset, and on a change whose organization is unknown (an earlier release's)", () => {
    const { feed } = newFeed();
    const a = recordingSubscriber();
    const b = recordingSubscriber();
    feed.subscribe(owner('org_a'), a);
    feed.subscribe(owner('org_b', 'vfykey_2'), b);

    feed.hear({ type: 'reset' });
    feed.hear(apiKeyChange(undefined, 'apikey_x'));

    expect(a.events.slice(1)).toEqual([{ type: 'reset' }, { type: 'reset' }]);
    expect(b.events.slice(1)).toEqual([{ type: 'reset' }, { type: 'reset' }]);
    expect(JSON.stringify(a.events)).not.toContain('apikey_x');
  });

  it('ends every subscription when the notifications are lost, refuses new ones until reset, then takes them', () => {
    const { feed, counters } = newFeed();
    const before = recordingSubscriber();
    feed.subscribe(owner('org_a'), before);

    feed.hear({ type: 'lost' });
    const whileLost = feed.refusal();
    const refusedSubscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), refusedSubscriber);
    feed.hear({ type: 'reset' });
    const after = recordingSubscriber();
    feed.subscribe(owner('org_a'), after);

    expect(before.ended).toBe(true);
    expect(whileLost).toBe('notifications_lost');
    expect(refusedSubscriber).toMatchObject({ ended: true, events: [] });
    expect(after.events).toEqual([{ type: 'subscribed', heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs }]);
    expect(counters.ended).toEqual(['notifications_lost']);
    expect(feed.size).toBe(1);
  });

  it("ends only the subscriptions of a key that changed (the caller's own), not another's of the organization", () => {
    const { feed, counters } = newFeed();
    const changed = recordingSubscriber();
    const kept = recordingSubscriber();
    feed.subscribe(owner('org_a', 'vfykey_1'), changed);
    feed.subscribe(owner('org_a', 'vfykey_2'), kept);

    feed.hear({
      type: 'changed',
      change: { kind: 'verifier_key', id: 'vfykey_1', organizationId: 'org_a', change: 'updated' },
    });
    // An admin key with the same ID is another key.
    feed.hear({
      type: 'changed',
      change: { kind: 'admin_key', id: 'vfykey_2', organizationId: 'org_a', change: 'updated' },
    });

    expect([changed.ended, kept.ended]).toEqual([true, false]);
    expect(counters.ended).toEqual(['credential_changed']);
  });

  it('drops a subscriber that cannot keep up, and keeps sending to the others', () => {
    const { feed, counters } = newFeed();
    const slow = recordingSubscriber();
    const fast = recordingSubscriber();
    feed.subscribe(owner('org_a'), slow);
    feed.subscribe(owner('org_a', 'vfykey_2'), fast);
    slow.full = true;

    feed.hear(apiKeyChange('org_a', 'apikey_1'));
    feed.hear(apiKeyChange('org_a', 'apikey_2'));

    expect(slow).toMatchObject({ ended: true });
    expect(slow.events.filter((event) => event.type === 'api_key_changed')).toHaveLength(1);
    expect(fast.events.filter((event) => event.type === 'api_key_changed')).toHaveLength(2);
    expect(counters.ended).toEqual(['slow']);
    expect(feed.size).toBe(1);
  });

  it('holds at most maxSubscriptions, counts each refusal, and frees a slot when one is cancelled', () => {
    const { feed, counters } = newFeed(2);
    const first = feed.subscribe(owner('org_a'), recordingSubscriber());
    feed.subscribe(owner('org_b'), recordingSubscriber());

    const refused = feed.refusal();
    first.cancel();
    first.cancel();

    expect(refused).toBe('limit');
    expect(counters.refused).toEqual(['limit']);
    expect(feed.refusal()).toBeUndefined();
    expect(counters.ended).toEqual(['client_closed']);
  });

  it('sends every subscriber a heartbeat each interval', () => {
    vi.useFakeTimers();
    const { feed } = newFeed();
    const subscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), subscriber);

    vi.advanceTimersByTime(CHANGE_FEED.heartbeatIntervalMs * 3);

    expect(subscriber.events.filter((event) => event.type === 'heartbeat')).toHaveLength(3);
  });

  it('ends every subscription on close and refuses new ones', () => {
    const { feed, counters } = newFeed();
    const subscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), subscriber);

    feed.close();

    expect(subscriber.ended).toBe(true);
    expect(feed.refusal()).toBe('shutdown');
    expect(counters.ended).toEqual(['shutdown']);
  });
});
