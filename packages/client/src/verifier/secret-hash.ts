/** Hashes a secret into the key a verdict is remembered by. */
export type SecretHasher = (secret: string) => string;

/** The part of node:crypto the caching verifier uses. */
interface NodeCrypto {
  createHash(algorithm: 'sha256'): {
    update(data: string, encoding: 'utf8'): { digest(encoding: 'base64url'): string };
  };
  /** One-shot hashing (Node 20.12 on): about a third of the time of a Hash object, on every verification. */
  hash?: (algorithm: 'sha256', data: string, outputEncoding: 'base64url') => string;
}

// A specifier that bundlers do not follow: the client also runs in browsers (the console), whose bundles must not
// import node:crypto, and the caching verifier, which runs in Node only, loads it when it is created.
const NODE_CRYPTO = 'node:crypto';

/**
 * What the caching verifier keys a verdict by: the SHA-256 of the secret (base64url), so that a secret is never kept
 * in memory longer than the call that carries it. Rejects where there is no node:crypto (a browser).
 */
export async function loadSecretHasher(): Promise<SecretHasher> {
  const { createHash, hash } = (await import(/* @vite-ignore */ NODE_CRYPTO)) as NodeCrypto;
  if (typeof hash === 'function') {
    // A string is hashed as UTF-8, as createHash's update(secret, 'utf8') does.
    return (secret) => hash('sha256', secret, 'base64url');
  }
  return (secret) => createHash('sha256').update(secret, 'utf8').digest('base64url');
}
