import { untilAborted, type VerifyOptions } from '../transport.js';
import type { KeyUse, KeyVerification } from '../types.js';
import type { VerifierCacheOptions } from './cache-options.js';
import { ChangeFeed } from './change-feed.js';
import { loadSecretHasher, type SecretHasher } from './secret-hash.js';
import { UsageReports } from './usage-reports.js';
import { VerdictCache } from './verdict-cache.js';
import { withoutRequirement, withRequirement } from './verdict-permissions.js';

/** What the caching verifier asks the server, through the client's transport. */
export interface VerifierTransport {
  /** `verifyApiKey`, as the client without a cache sends it. */
  verify(secret: string, options?: VerifyOptions): Promise<KeyVerification>;
  /** `streamKeyChanges`: the event stream, or a rejection with an `ApiKeysError`. */
  openKeyChanges(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** `reportKeyUsage`. */
  reportKeyUsage(uses: KeyUse[]): Promise<unknown>;
  /** How long to wait for the feed's `subscribed` (the client's `timeoutMs`). */
  connectTimeoutMs: number;
}

/** What an operator (or a test) can see of a verifier's cache. Counters start at 0 when the client is created. */
export interface VerifierCacheView {
  /** Whether the change feed is live: only then are verdicts answered from memory and remembered. */
  readonly live: boolean;
  /** How many verdicts are held. */
  readonly size: number;
  /** Verifications answered from memory. */
  readonly hits: number;
  /** Verifications that went to the server (or joined one that was already on its way). */
  readonly misses: number;
}

/** A question on its way to the server, shared by every verification of the same secret meanwhile. */
interface InFlight {
  answer: Promise<KeyVerification>;
  /** The generation when it was asked: a later one must not join it (the answer may predate a change). */
  generation: number;
}

/** The caching verifier: `verify`, what it shows of its cache, and `close`. */
export interface CachingVerifier {
  verify(secret: string, options?: VerifyOptions): Promise<KeyVerification>;
  readonly cache: VerifierCacheView;
  close(): Promise<void>;
}

/**
 * A verifier that answers from memory what it may (see the "Caching verifier" section of the client's README): a
 * verdict is remembered only while the change feed is live, forgotten as soon as the feed names its key, resets or
 * is lost, and answered only within its age, its expiry and (for `NOT_FOUND`) the negative TTL. Every event that
 * can make an answer stale moves the generation on, and an answer asked for in an older generation is not kept.
 */
export function createCachingVerifier(
  transport: VerifierTransport,
  options: Required<VerifierCacheOptions>,
): CachingVerifier {
  const verdicts = new VerdictCache(options);
  const inFlight = new Map<string, InFlight>();
  const usage = new UsageReports({ send: transport.reportKeyUsage, intervalMs: options.usageReportIntervalMs });
  let generation = 0;
  let closed = false;
  let closing: Promise<void> | undefined;
  const counters = { hits: 0, misses: 0 };
  const loadingHasher = loadSecretHasher();
  let hashSecret: SecretHasher | undefined;
  loadingHasher.then(
    (hasher) => {
      hashSecret = hasher;
    },
    () => {}, // the first verification rejects with the reason
  );

  /** Forgets everything, and the answers on their way too. */
  const forgetAll = () => {
    generation += 1;
    verdicts.clear();
  };
  const feed = new ChangeFeed(
    { open: transport.openKeyChanges, connectTimeoutMs: transport.connectTimeoutMs },
    {
      subscribed: forgetAll,
      keyChanged(apiKeyId) {
        generation += 1;
        verdicts.forgetKey(apiKeyId);
      },
      reset: forgetAll,
      lost: forgetAll,
    },
  );
  feed.start();
  usage.start();

  /**
   * Asks the server for the verdict of the secret alone, sharing the question with every verification of the same
   * secret in this generation. The first asker's permission requirement goes with it, so that the server counts a
   * use of the key only when its answer is valid; the verdict of the secret alone is read back from the answer.
   */
  function ask(hash: string, secret: string, requestOptions: VerifyOptions): Promise<KeyVerification> {
    const pending = inFlight.get(hash);
    if (pending !== undefined && pending.generation === generation) {
      return pending.answer;
    }
    const askedIn = generation;
    const askedAt = performance.now();
    // The caller's signal stops its own wait (below), not the question the others share; those who join it get the
    // first caller's retries and timeout.
    const { signal: _, ...shared } = requestOptions;
    const answer = transport
      .verify(secret, shared)
      .then(withoutRequirement)
      .then((verdict) => {
        if (feed.live && !closed && generation === askedIn) {
          verdicts.set(hash, verdict, askedAt);
        }
        return verdict;
      });
    const entry = { answer, generation: askedIn };
    inFlight.set(hash, entry);
    const done = () => {
      if (inFlight.get(hash) === entry) {
        inFlight.delete(hash);
      }
    };
    answer.then(done, done);
    return answer;
  }

  return {
    async verify(secret, verifyOptions) {
      verifyOptions?.signal?.throwIfAborted();
      const permissions = verifyOptions?.permissions;
      // The verdict of the secret alone is what is remembered (and shared by every requirement); a requirement is
      // decided from it by the server's own evaluator. One the evaluator refuses is the server's to answer.
      const requirement =
        permissions === undefined ? undefined : typeof permissions === 'string' ? withRequirement(permissions) : null;
      if (typeof secret !== 'string' || secret.length === 0 || closed || requirement === null) {
        return transport.verify(secret, verifyOptions);
      }
      const hash = (hashSecret ?? (await loadingHasher))(secret);
      const remembered = feed.live ? verdicts.get(hash) : undefined;
      if (remembered !== undefined) {
        counters.hits += 1;
        const verdict = requirement === undefined ? remembered : requirement(remembered);
        if (verdict.code === 'VALID' && verdict.key !== null) {
          usage.note(verdict.key.id);
        }
        return verdict;
      }
      counters.misses += 1;
      const answer = ask(hash, secret, verifyOptions ?? {});
      const signal = verifyOptions?.signal;
      const waited = signal === undefined ? answer : untilAborted(answer, signal);
      return requirement === undefined ? waited : waited.then(requirement);
    },

    cache: {
      get live() {
        return feed.live && !closed;
      },
      get size() {
        return verdicts.size;
      },
      get hits() {
        return counters.hits;
      },
      get misses() {
        return counters.misses;
      },
    },

    close() {
      closing ??= (async () => {
        closed = true;
        forgetAll();
        await feed.close();
        await usage.close();
      })();
      return closing;
    },
  };
}
