import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// The largest multiple of 62 below 256: bytes at or above it are rejected so every character is equally likely.
const UNBIASED_LIMIT = 248;

/** A string of `length` characters drawn uniformly from [A-Za-z0-9] with a cryptographic generator. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_LIMIT) {
        out += ALPHABET[byte % 62];
        if (out.length === length) {
          break;
        }
      }
    }
  }
  return out;
}

/** An identifier such as `apikey_` followed by 24 random base62 characters. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(24)}`;
}
