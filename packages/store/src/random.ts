import { randomBytes } from 'node:crypto';

/** The characters of identifiers and secrets. */
export const BASE62_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// The largest multiple of 62 below 256: bytes at or above it are rejected so every character is equally likely.
const UNBIASED_LIMIT = 248;

// Random bytes are drawn in blocks, as Node does for randomUUID(): one system call per block instead of one per
// identifier, which matters when millions of keys are seeded. Each byte is used once.
const POOL_SIZE = 64 * 1024;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextRandomByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++] as number;
}

/** A string of `length` characters drawn uniformly from [A-Za-z0-9] with a cryptographic generator. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    if (byte < UNBIASED_LIMIT) {
      out += BASE62_ALPHABET[byte % 62];
    }
  }
  return out;
}

/** `bytes` cryptographically random bytes, hex-encoded. */
export function randomHex(bytes: number): string {
  if (offset + bytes > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** An identifier such as `apikey_` followed by 24 random base62 characters. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** mulberry32: a small, fast, seedable PRNG. Only the spread of attributes depends on it, never a secret. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
