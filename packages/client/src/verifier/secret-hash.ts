// The client is type-checked without Node's types, since it also runs in browsers (the console), and the caching
// verifier runs in Node only: this file alone brings them in, for node:crypto. (TypeScript does not copy this
// directive into the published declarations, which name no Node type.)
/// <reference types="node" />
import { createHash } from 'node:crypto';

/**
 * What the caching verifier keys a verdict by: the SHA-256 of the secret (base64url), so that a secret is never
 * kept in memory longer than the call that carries it.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}
