import { Writable } from 'node:stream';
import { CHANGE_FEED } from '@apikeys/api-types';
import type { CredentialRef, KeyChange } from '@apikeys/store';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ActiveCredentials,
  type ChangeFeedSettings,
  DEFAULT_CHANGE_FEED,
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

/** The `subscribed` event of a subscription whose lifetime is at most `maxLifetimeMs`. */
const subscribed = (maxLifetimeMs = DEFAULT_CHANGE_FEED.maxLifetimeMs) => ({
  type: 'subscribed',
  heartbeat_interval_ms: CHANGE_FEED.heartbeatIntervalMs,
  ends_in_ms: expect.toSatisfy((ms: number) => ms > maxLifetimeMs * 0.9 - 1 && ms <= maxLifetimeMs),
});

/** Every credential is active. */
const allActive: ActiveCredentials = async (credentials) => [...credentials];

/** A logger whose JSON lines are kept. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, destination) };
}

describe('KeyChangeFeed', () => {
  const feeds: KeyChangeFeed[] = [];
  const newFeed = (
    settings: Partial<ChangeFeedSettings> = {},
    counters = countingCounters(),
    activeCredentials = allActive,
    feedLogger = logger,
  ) => {
    const feed = new KeyChangeFeed(
      { ...DEFAULT_CHANGE_FEED, maxSubscriptions: 10, ...settings },
      feedLogger,
      activeCredentials,
      counters,
    );
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

    expect(ours.events).toEqual([subscribed(), { type: 'api_key_changed', api_key_id: 'apikey_a', change: 'rotated' }]);
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
    const whileLost = feed.refusal(owner('org_a'));
    const refusedSubscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), refusedSubscriber);
    feed.hear({ type: 'reset' });
    const after = recordingSubscriber();
    feed.subscribe(owner('org_a'), after);

    expect(before.ended).toBe(true);
    expect(whileLost).toBe('notifications_lost');
    expect(refusedSubscriber).toMatchObject({ ended: true, events: [] });
    expect(after.events).toEqual([subscribed()]);
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
    const { feed, counters } = newFeed({ maxSubscriptions: 2 });
    const first = feed.subscribe(owner('org_a'), recordingSubscriber());
    feed.subscribe(owner('org_b'), recordingSubscriber());

    const refused = feed.refusal(owner('org_c'));
    first.cancel();
    first.cancel();

    expect(refused).toBe('limit');
    expect(counters.refused).toEqual(['limit']);
    expect(feed.refusal(owner('org_c'))).toBeUndefined();
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
    expect(feed.refusal(owner('org_a'))).toBe('shutdown');
    expect(counters.ended).toEqual(['shutdown']);
  });
  it("refuses a credential past its quota and an organization past its own, and takes another organization's", () => {
    const { feed, counters } = newFeed({ maxSubscriptions: 100, maxPerCredential: 2, maxPerOrganization: 3 });
    for (const _ of [1, 2]) {
      feed.subscribe(owner('org_a', 'vfykey_1'), recordingSubscriber());
    }
    const credentialRefused = feed.refusal(owner('org_a', 'vfykey_1'));
    const refusedSubscriber = recordingSubscriber();
    feed.subscribe(owner('org_a', 'vfykey_1'), refusedSubscriber);
    const sameOrganization = feed.subscribe(owner('org_a', 'vfykey_2'), recordingSubscriber());
    const organizationRefused = feed.refusal(owner('org_a', 'vfykey_3'));
    const otherOrganization = recordingSubscriber();
    feed.subscribe(owner('org_b', 'vfykey_9'), otherOrganization);
    sameOrganization.cancel();

    expect(credentialRefused).toBe('credential_quota');
    expect(refusedSubscriber).toMatchObject({ ended: true, events: [] });
    expect(organizationRefused).toBe('organization_quota');
    expect(otherOrganization.events).toEqual([subscribed()]);
    expect(counters.refused).toEqual(['credential_quota', 'credential_quota', 'organization_quota']);
    expect(feed.refusal(owner('org_a', 'vfykey_3'))).toBeUndefined();
    expect(feed.size).toBe(3);
  });

  it('ends a subscription cleanly at the first heartbeat after its lifetime, which subscribed announced', () => {
    vi.useFakeTimers();
    const lifetime = 10 * CHANGE_FEED.heartbeatIntervalMs;
    const { feed, counters } = newFeed({ maxLifetimeMs: lifetime });
    const subscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), subscriber);
    const [first] = subscriber.events;
    const endsInMs = first?.type === 'subscribed' ? first.ends_in_ms : Number.NaN;

    vi.advanceTimersByTime(endsInMs - 1);
    const endedEarly = subscriber.ended;
    vi.advanceTimersByTime(CHANGE_FEED.heartbeatIntervalMs + 1);

    expect(first).toEqual(subscribed(lifetime));
    expect(endedEarly).toBe(false);
    expect(subscriber.ended).toBe(true);
    expect(counters.ended).toEqual(['lifetime']);
    expect(feed.size).toBe(0);
  });

  it("reads the subscribers' credentials again on reset, and ends those no longer active", async () => {
    const asked: CredentialRef[][] = [];
    const disabled = new Set(['vfykey_1']);
    const { feed, counters } = newFeed({}, countingCounters(), async (credentials) => {
      asked.push([...credentials]);
      return credentials.filter((credential) => !disabled.has(credential.id));
    });
    const ofDisabled = recordingSubscriber();
    const ofActive = recordingSubscriber();
    feed.subscribe(owner('org_a', 'vfykey_1'), ofDisabled);
    feed.subscribe(owner('org_b', 'vfykey_2'), ofActive);

    feed.hear({ type: 'reset' });
    await feed.checkCredentials();

    expect(asked[0]).toEqual([
      { kind: 'verifier_key', id: 'vfykey_1' },
      { kind: 'verifier_key', id: 'vfykey_2' },
    ]);
    expect([ofDisabled.ended, ofActive.ended]).toEqual([true, false]);
    expect(ofDisabled.events.at(-1)).toEqual({ type: 'reset' });
    expect(counters.ended).toEqual(['credential_changed']);
  });

  it('reads the credentials once more for a burst of resets, and ends nothing when the reading fails', async () => {
    let readings = 0;
    let fail = true;
    const { lines, logger: warned } = recordingLogger();
    const { feed } = newFeed(
      {},
      countingCounters(),
      async () => {
        readings += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (fail) {
          throw new Error('the database is unavailable');
        }
        return [];
      },
      warned,
    );
    const subscriber = recordingSubscriber();
    feed.subscribe(owner('org_a'), subscriber);

    for (const _ of Array.from({ length: 5 })) {
      feed.hear({ type: 'reset' });
    }
    await feed.checkCredentials();
    const afterFailures = { readings, ended: subscriber.ended };
    fail = false;
    feed.hear({ type: 'reset' });
    await feed.checkCredentials();

    expect(afterFailures).toEqual({ readings: 2, ended: false });
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      "change feed: could not read the subscribers' credentials again; they are read at the next reset",
      "change feed: could not read the subscribers' credentials again; they are read at the next reset",
    ]);
    expect(subscriber.ended).toBe(true);
  });

  it('warns of refusals at most once per interval, counting them, with no stack', () => {
    vi.useFakeTimers();
    const { lines, logger: warned } = recordingLogger();
    const { feed } = newFeed({ maxSubscriptions: 1 }, countingCounters(), allActive, warned);
    feed.subscribe(owner('org_a'), recordingSubscriber());

    for (let n = 0; n < 500; n++) {
      feed.refusal(owner('org_b'));
    }
    vi.advanceTimersByTime(10_000);
    feed.refusal(owner('org_b'));

    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ refused: { limit: 1 } });
    expect(warnings[1]).toMatchObject({ refused: { limit: 500 } });
    expect(JSON.stringify(warnings)).not.toMatch(/stack|"err"/);
  });
});
