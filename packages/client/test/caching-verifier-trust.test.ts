import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVerifierClient, type KeyVerification, type VerifierClient } from '../src/index.js';
import {
  type FakeVerifierServer,
  keyId,
  sleep,
  startFakeVerifierServer,
  valid,
  verifiedKey,
  waitFor,
} from './support/fake-verifier-server.js';

// The trust rules of the caching verifier, against a fake of the endpoints it calls (announcing a 100 ms heartbeat):
// what it answers from memory, and what sends it back to the server. Each test counts the verifications the server
// received.

let server: FakeVerifierServer;
let verifier: VerifierClient;

const SECRET = `sk-api-${'A'.repeat(43)}`;
const OTHER = `sk-api-${'B'.repeat(43)}`;

/** A caching verifier of the fake server, once its feed is live. */
async function liveVerifier(cache: Parameters<typeof createVerifierClient>[0]['cache'] = true) {
  verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', maxRetries: 0, cache });
  await waitFor(() => verifier.cache?.live === true, 5_000, 'the feed to be live');
  return verifier;
}

/** A time `ms` from now, as the API writes it. */
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/Z$/, '000Z');

beforeEach(async () => {
  server = await startFakeVerifierServer();
  server.verdicts.set(SECRET, valid(keyId(1)));
  server.verdicts.set(OTHER, valid(keyId(2)));
});

afterEach(async () => {
  await verifier?.close();
  await server.close();
});

describe('caching verifier: answers from memory', () => {
  it('answers a secret it verified before from memory while the feed is live', async () => {
    await liveVerifier();

    const first = await verifier.keys.verify(SECRET);
    const second = await verifier.keys.verify(SECRET);

    expect(second).toEqual(first);
    expect(server.verifications).toEqual([SECRET]);
    expect(verifier.cache).toMatchObject({ hits: 1, misses: 1, size: 1, live: true });
  });

  it('remembers INACTIVE, ARCHIVED and EXPIRED like VALID', async () => {
    const codes = ['INACTIVE', 'ARCHIVED', 'EXPIRED'] as const;
    const secrets = codes.map((code, i) => {
      const secret = `sk-api-${code.padEnd(43, 'x')}`;
      server.verdicts.set(secret, { valid: false, code, key: verifiedKey(keyId(10 + i)) } as KeyVerification);
      return secret;
    });
    await liveVerifier();

    for (const secret of [...secrets, ...secrets]) {
      await verifier.keys.verify(secret);
    }

    expect(server.verifications).toEqual(secrets);
  });

  it('asks the server, and remembers nothing, before the feed is live', async () => {
    server.nextSubscriptions = ['silent'];
    verifier = createVerifierClient({ baseUrl: server.baseUrl, apiKey: 'sk-vfy-test', maxRetries: 0, cache: true });
    await waitFor(() => server.openStreams === 1);

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);

    expect(server.verifications).toEqual([SECRET, SECRET]);
    expect(verifier.cache).toMatchObject({ live: false, size: 0 });
  });

  it('shares one request among concurrent verifications of one secret', async () => {
    await liveVerifier();
    let release = () => {};
    server.holdVerifications = new Promise((resolve) => {
      release = resolve;
    });

    const answers = Array.from({ length: 20 }, () => verifier.keys.verify(SECRET));
    await waitFor(() => server.verifications.length === 1);
    release();

    expect(new Set((await Promise.all(answers)).map((answer) => answer.key?.id))).toEqual(new Set([keyId(1)]));
    expect(server.verifications).toEqual([SECRET]);
  });

  it('holds at most maxEntries verdicts, dropping the least recently used', async () => {
    const third = `sk-api-${'C'.repeat(43)}`;
    server.verdicts.set(third, valid(keyId(3)));
    await liveVerifier({ maxEntries: 2 });

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(OTHER);
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(third);
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(OTHER);

    expect(verifier.cache?.size).toBe(2);
    expect(server.verifications).toEqual([SECRET, OTHER, third, OTHER]);
  });
});

describe('caching verifier: the change feed makes it forget', () => {
  it('forgets every verdict naming a key when api_key_changed names it, and only those', async () => {
    const sameKey = `sk-api-${'S'.repeat(43)}`;
    server.verdicts.set(sameKey, valid(keyId(1)));
    await liveVerifier();
    for (const secret of [SECRET, sameKey, OTHER]) {
      await verifier.keys.verify(secret);
    }

    server.send({ type: 'api_key_changed', api_key_id: keyId(1), change: 'updated' });
    await waitFor(() => verifier.cache?.size === 1);
    for (const secret of [SECRET, sameKey, OTHER]) {
      await verifier.keys.verify(secret);
    }

    expect(server.verifications).toEqual([SECRET, sameKey, OTHER, SECRET, sameKey]);
  });

  it('treats a kind of change it does not know as a change', async () => {
    await liveVerifier();
    await verifier.keys.verify(SECRET);

    server.send({ type: 'api_key_changed', api_key_id: keyId(1), change: 'transmogrified' });
    await waitFor(() => verifier.cache?.size === 0);
    await verifier.keys.verify(SECRET);

    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('forgets everything on reset', async () => {
    await liveVerifier();
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(OTHER);

    server.send({ type: 'reset' });
    await waitFor(() => verifier.cache?.size === 0);
    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(OTHER);

    expect(server.verifications).toEqual([SECRET, OTHER, SECRET, OTHER]);
  });

  it.each([
    ['api_key_changed', { type: 'api_key_changed', api_key_id: keyId(1), change: 'updated' }],
    ['reset', { type: 'reset' }],
  ])('does not remember an answer that was on its way when %s arrived', async (_, event) => {
    await liveVerifier();
    let release = () => {};
    server.holdVerifications = new Promise((resolve) => {
      release = resolve;
    });
    const answer = verifier.keys.verify(SECRET);
    await waitFor(() => server.verifications.length === 1);

    server.send(event);
    await sleep(50);
    release();
    server.holdVerifications = undefined;

    expect(await answer).toMatchObject({ valid: true });
    expect(verifier.cache?.size).toBe(0);
    await verifier.keys.verify(SECRET);
    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('does not let a verification that starts after a change join a question asked before it', async () => {
    await liveVerifier();
    let release = () => {};
    server.holdVerifications = new Promise((resolve) => {
      release = resolve;
    });
    const before = verifier.keys.verify(SECRET);
    await waitFor(() => server.verifications.length === 1);

    server.send({ type: 'api_key_changed', api_key_id: keyId(1), change: 'updated' });
    await sleep(50);
    const after = verifier.keys.verify(SECRET);
    await waitFor(() => server.verifications.length === 2);
    release();
    await Promise.all([before, after]);

    expect(server.verifications).toEqual([SECRET, SECRET]);
    expect(verifier.cache?.size).toBe(1);
  });
});

describe('caching verifier: age, expiry and the negative cache', () => {
  it('asks again once a VALID key has expired by the clock', async () => {
    server.verdicts.set(SECRET, valid(keyId(1), inMs(300)));
    await liveVerifier();

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);
    await sleep(350);
    await verifier.keys.verify(SECRET);

    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('never answers from memory a VALID verdict whose expiry has passed when it arrives', async () => {
    server.verdicts.set(SECRET, valid(keyId(1), inMs(-1000)));
    await liveVerifier();

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);

    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('answers NOT_FOUND from memory for negativeTtlMs only: a flood reaches the server once per interval', async () => {
    const unknown = `sk-api-${'N'.repeat(43)}`;
    await liveVerifier({ negativeTtlMs: 300 });

    await Promise.all(Array.from({ length: 50 }, () => verifier.keys.verify(unknown)));
    for (let i = 0; i < 20; i += 1) {
      expect(await verifier.keys.verify(unknown)).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
    }
    expect(server.verifications).toEqual([unknown]);
    await sleep(350);
    await verifier.keys.verify(unknown);

    expect(server.verifications).toEqual([unknown, unknown]);
  });

  it('remembers no NOT_FOUND with negativeTtlMs 0', async () => {
    const unknown = `sk-api-${'N'.repeat(43)}`;
    await liveVerifier({ negativeTtlMs: 0 });

    await verifier.keys.verify(unknown);
    await verifier.keys.verify(unknown);

    expect(server.verifications).toEqual([unknown, unknown]);
  });

  it('answers nothing from memory older than maxAgeMs, while the feed is live', async () => {
    await liveVerifier({ maxAgeMs: 300 });

    await verifier.keys.verify(SECRET);
    await verifier.keys.verify(SECRET);
    await sleep(350);
    expect(verifier.cache?.live).toBe(true);
    await verifier.keys.verify(SECRET);

    expect(server.verifications).toEqual([SECRET, SECRET]);
  });

  it('hands out remembered verdicts frozen, so that no caller can change what the next one gets', async () => {
    await liveVerifier();
    await verifier.keys.verify(SECRET);

    const remembered = await verifier.keys.verify(SECRET);

    expect(Object.isFrozen(remembered)).toBe(true);
    expect(Object.isFrozen(remembered.key)).toBe(true);
  });
});
