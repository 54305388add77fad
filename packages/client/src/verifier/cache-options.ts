/** Options of the caching verifier (`createVerifierClient({ cache })`); every one has a default. */
export interface VerifierCacheOptions {
  /**
   * The most verdicts remembered; the least recently used goes first. Default 10 000; at most 10 000 000 (the LRU
   * allocates about 28 bytes per entry up front).
   */
  maxEntries?: number;
  /** No verdict is answered from memory once it is this old, whatever the change feed says. Default 60 000 ms. */
  maxAgeMs?: number;
  /**
   * How long a `NOT_FOUND` is answered from memory, so that a flood of one unknown secret reaches the server once per
   * this interval; 0 never remembers one. Default 5 000 ms.
   */
  negativeTtlMs?: number;
  /** How often the uses of keys answered from memory are reported (`reportKeyUsage`). Default 60 000 ms. */
  usageReportIntervalMs?: number;
}

/** The defaults of `VerifierCacheOptions`. */
export const VERIFIER_CACHE_DEFAULTS = {
  maxEntries: 10_000,
  maxAgeMs: 60_000,
  negativeTtlMs: 5_000,
  usageReportIntervalMs: 60_000,
} as const satisfies Required<VerifierCacheOptions>;

/** The longest delay `setTimeout` supports. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The range of each option, and whether it must be an integer. */
const RANGES: Record<keyof VerifierCacheOptions, { min: number; max: number; integer: boolean }> = {
  maxEntries: { min: 1, max: 10_000_000, integer: true },
  maxAgeMs: { min: 1, max: MAX_TIMER_MS, integer: false },
  negativeTtlMs: { min: 0, max: MAX_TIMER_MS, integer: false },
  usageReportIntervalMs: { min: 1, max: MAX_TIMER_MS, integer: false },
};

/**
 * The options of the `cache` option, with defaults: `true` for every default, an options object, or `false` /
 * `undefined` for no cache (`undefined` is returned). Throws a `TypeError` naming the option on anything else.
 */
export function resolveCacheOptions(cache: unknown): Required<VerifierCacheOptions> | undefined {
  if (cache === undefined || cache === false) {
    return undefined;
  }
  if (cache === true) {
    return { ...VERIFIER_CACHE_DEFAULTS };
  }
  if (typeof cache !== 'object' || cache === null || Array.isArray(cache)) {
    throw new TypeError('cache must be true, false or an object of cache options');
  }
  const resolved: Required<VerifierCacheOptions> = { ...VERIFIER_CACHE_DEFAULTS };
  for (const [name, value] of Object.entries(cache)) {
    if (!Object.hasOwn(RANGES, name)) {
      throw new TypeError(`cache.${name} is not a cache option (${Object.keys(RANGES).join(', ')})`);
    }
    if (value === undefined) {
      continue;
    }
    const { min, max, integer } = RANGES[name as keyof VerifierCacheOptions];
    const valid = typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
    if (!valid || (integer && !Number.isInteger(value))) {
      throw new TypeError(`cache.${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    }
    resolved[name as keyof VerifierCacheOptions] = value;
  }
  return resolved;
}
