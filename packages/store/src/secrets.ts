import { createHash, timingSafeEqual } from 'node:crypto';
import { BASE62_ALPHABET, randomBase62 } from './random.js';

/** Fixed prefixes that tell an admin key, a regular API key and a verifier key apart at a glance. */
export const SECRET_PREFIX = {
  admin: 'sk-adm-',
  apiKey: 'sk-api-',
  verifier: 'sk-vfy-',
} as const;

export type SecretKind = keyof typeof SECRET_PREFIX;

// 43 base62 characters carry 43 * log2(62) ≈ 256.03 bits of randomness.
const RANDOM_LENGTH = 43;
// 6 base62 characters of checksum: a mistyped secret passes it once in 62^6 ≈ 57 billion.
const CHECKSUM_LENGTH = 6;
const SECRET_FORM = new RegExp(
  `^(?:${Object.values(SECRET_PREFIX).join('|')})([A-Za-z0-9]{${RANDOM_LENGTH}})([A-Za-z0-9]{${CHECKSUM_LENGTH}})?$`,
);

/** A freshly generated secret: the full value (shown once), its hash and its hint (both stored). */
export interface IssuedSecret {
  secret: string;
  hash: string;
  hint: string;
}

/**
 * Generates a new secret of the given kind: its prefix, 43 random base62 characters and a 6-character checksum of
 * both (`checksumOf`), e.g. `sk-api-` + 43 + 6 = 56 characters. The fixed prefix lets leak scanners recognise a
 * secret, and the checksum lets the server refuse a mistyped one without a database lookup. Only `hash` and `hint`
 * may ever be stored.
 */
export function issueSecret(kind: SecretKind): IssuedSecret {
  const body = SECRET_PREFIX[kind] + randomBase62(RANDOM_LENGTH);
  const secret = body + checksumOf(body);
  return { secret, hash: hashSecret(secret), hint: hintFor(secret, kind) };
}

/** The checksum of a secret's prefix and random part: the first 8 bytes of their SHA-256, in 6 base62 characters. */
export function checksumOf(body: string): string {
  let value = createHash('sha256').update(body, 'utf8').digest().readBigUInt64BE(0);
  let checksum = '';
  for (let index = 0; index < CHECKSUM_LENGTH; index++) {
    checksum += BASE62_ALPHABET[Number(value % 62n)];
    value /= 62n;
  }
  return checksum;
}

/**
 * What a presented secret is, by its form alone: `checksummed` (a current secret whose checksum holds), `legacy`
 * (a secret issued before the checksum existed: the prefix and 43 characters, to be looked up as before),
 * `mistyped` (the current form with a checksum that does not hold) or `foreign` (no form this service ever issued).
 * Only `checksummed` and `legacy` secrets can belong to a key.
 */
export function secretForm(secret: string): 'checksummed' | 'legacy' | 'mistyped' | 'foreign' {
  const match = SECRET_FORM.exec(secret);
  if (!match) {
    return 'foreign';
  }
  const checksum = match[2];
  if (checksum === undefined) {
    return 'legacy';
  }
  return checksumOf(secret.slice(0, -CHECKSUM_LENGTH)) === checksum ? 'checksummed' : 'mistyped';
}

/** The kind of key a secret's prefix names, or undefined for none: says which table may hold it, nothing more. */
export function secretKind(secret: string): SecretKind | undefined {
  for (const [kind, prefix] of Object.entries(SECRET_PREFIX) as [SecretKind, string][]) {
    if (secret.startsWith(prefix)) {
      return kind;
    }
  }
  return undefined;
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
