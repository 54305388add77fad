import { createHash } from 'node:crypto';

/** A response the API reference serves from memory: bytes and headers fixed when the server starts. */
export interface StaticResource {
  body: Buffer;
  headers: Readonly<Record<string, string>>;
}

// Revalidated after five minutes: a deployment's new spec or page reaches browsers quickly.
const SHORT_LIVED = 'public, max-age=300';
// Fingerprinted paths change whenever their content does, so a cached copy is never stale.
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** A resource at a stable path (the page, the spec) that browsers may cache briefly. */
export function shortLived(
  body: Buffer | string,
  contentType: string,
  headers: Record<string, string> = {},
): StaticResource {
  return resource(body, contentType, SHORT_LIVED, headers);
}

/** A resource at a fingerprinted path (`fingerprintedPath`), cached for a year. */
export function immutable(body: Buffer | string, contentType: string): StaticResource {
  return resource(body, contentType, IMMUTABLE, {});
}

/** `<folder>/<first 16 hex digits of the content's SHA-256>/<name>`: a path that changes with the content. */
export function fingerprintedPath(folder: string, name: string, body: Buffer | string): string {
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return `${folder}/${digest}/${name}`;
}

function resource(
  body: Buffer | string,
  contentType: string,
  cacheControl: string,
  headers: Record<string, string>,
): StaticResource {
  return {
    body: Buffer.from(body),
    headers: {
      'content-type': contentType,
      'cache-control': cacheControl,
      'x-content-type-options': 'nosniff',
      ...headers,
    },
  };
}
