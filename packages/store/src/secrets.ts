import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from './random.js';

/** Fixed prefixes that tell an admin key from a regular API key at a glance. */
export const SECRET_PREFIX = {
  admin: 'sk-adm-',
  apiKey: 'sk-api-',
} as const;

export type SecretKind = keyof typeof SECRET_PREFIX;

// 43 base62 characters carry 43 * log2(62) ≈ 256.03 bits of randomness.
const RANDOM_LENGTH = 43;

/** A freshly generated secret: the full value (shown once), its hash and its hint (both stored). */
export interface IssuedSecret {
  secret: string;
  hash: string;
  hint: string;
}

/** Generates a new secret of the given kind. Only `hash` and `hint` may ever be stored. */
export function issueSecret(kind: SecretKind): IssuedSecret {
  const secret = SECRET_PREFIX[kind] + randomBase62(RANDOM_LENGTH);
  return { secret, hash: hashSecret(secret), hint: hintFor(secret, kind) };
}

/** SHA-256 of the secret, hex-encoded. Secrets carry 256 bits of randomness, so a fast hash is sufficient. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The prefix, the first 4 random characters, `...` and the last 4 characters: never enough to use the key. */
export function hintFor(secret: string, kind: SecretKind): string {
  const prefix = SECRET_PREFIX[kind];
  return `${secret.slice(0, prefix.length + 4)}...${secret.slice(-4)}`;
}

/**
 * Compares two hashes in constant time. Compares the text itself: hex decoding would drop invalid or odd trailing
 * characters, so that `abc` would equal `abd`.
 */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
