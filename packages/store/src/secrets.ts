import { createHash, timingSafeEqual } from 'node:crypto';
import { SECRET_CHECKSUM_LENGTH, SECRET_PREFIX, SECRET_RANDOM_LENGTH } from '@apikeys/permissions';
import { BASE62_ALPHABET, randomBase62 } from './random.js';

// The form of secrets (their prefixes, 43 random characters: 43 * log2(62) ≈ 256.03 bits, 6 of checksum) is shared
// with every package that must recognise one; this module issues and checks them.
export { SECRET_PREFIX };

export type SecretKind = keyof typeof SECRET_PREFIX;

const RANDOM_PART = `([A-Za-z0-9]{${SECRET_RANDOM_LENGTH}})`;
// 6 base62 characters of checksum: a mistyped secret passes it once in 62^6 ≈ 57 billion.
const CHECKSUM_PART = `([A-Za-z0-9]{${SECRET_CHECKSUM_LENGTH}})?`;
const SECRET_FORM = new RegExp(`^(?:${Object.values(SECRET_PREFIX).join('|')})${RANDOM_PART}${CHECKSUM_PART}$`);

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
  const body = SECRET_PREFIX[kind] + randomBase62(SECRET_RANDOM_LENGTH);
  const secret = body + checksumOf(body);
  return { secret, hash: hashSecret(secret), hint: hintFor(secret, kind) };
}

/** The checksum of a secret's prefix and random part: the first 8 bytes of their SHA-256, in 6 base62 characters. */
export function checksumOf(body: string): string {
  let value = createHash('sha256').update(body, 'utf8').digest().readBigUInt64BE(0);
  let checksum = '';
  for (let index = 0; index < SECRET_CHECKSUM_LENGTH; index++) {
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
  return checksumOf(secret.slice(0, -SECRET_CHECKSUM_LENGTH)) === checksum ? 'checksummed' : 'mistyped';
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
