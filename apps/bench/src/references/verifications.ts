import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KeyVerification, KnownKeys } from '../seed.js';

/** The answer for a secret that is no known key's. */
export const NOT_FOUND: KeyVerification = { valid: false, code: 'NOT_FOUND', key: null };

/** A secret's SHA-256, hex-encoded, as the server hashes it to look it up. */
export const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/**
 * What verifying each known secret answers, by the secret's hash: the keys the real server verifies, written to a
 * file by the harness (none when the run verifies none).
 */
export function loadVerifications(): Map<string, KeyVerification> {
  const file = process.env.BENCH_VERIFICATIONS_FILE;
  const keys = file ? (JSON.parse(readFileSync(file, 'utf8')) as KnownKeys['keys']) : [];
  return new Map(keys.map(({ secret, verification }) => [hashOf(secret), verification]));
}
