import { isUtf8 } from 'node:buffer';
import { MAX_REQUEST_BODY_BYTES } from '@apikeys/api-types';
import express, { type NextFunction, type Request, type Response } from 'express';
import typeIs from 'type-is';
import { quotable } from '../domain/quotable.js';
import { unsupportedEncoding, unsupportedMediaType } from './errors/body-parser-errors.js';
import { HttpError } from './errors/http-error.js';
import { openApiMetadataOf } from './openapi-metadata.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Checks the raw bytes before parsing: the JSON parser reads an empty body as `{}`, but a required body must be
 * sent; and JSON is UTF-8, which the parser would otherwise decode leniently, turning bad bytes into U+FFFD.
 */
function checkBytes(_req: unknown, _res: unknown, buffer: Buffer): void {
  if (buffer.length === 0) {
    throw Object.assign(new Error('the request body is empty'), { status: 400, type: 'entity.empty' });
  }
  if (!isUtf8(buffer)) {
    throw Object.assign(new Error('the request body is not UTF-8'), { status: 400, type: 'entity.not.utf8' });
  }
}

// With the `u` flag a surrogate pair is one code point, so only a lone surrogate is in this category.
const LONE_SURROGATE = /\p{Cs}/u;

/** A value met while walking a body: its key, and the entry of the value that holds it (none for the body). */
interface Visit {
  value: unknown;
  key?: string;
  parent?: Visit;
}

/** The keys from the body down to a visited value: `['name']`, `['a', 'b']`. */
function pathOf(visit: Visit | undefined): string[] {
  const path: string[] = [];
  for (let current = visit; current?.key !== undefined; current = current.parent) {
    path.unshift(current.key);
  }
  return path;
}

/**
 * The path of the first string, key or value, that holds a lone surrogate; undefined if none. It walks with a stack
 * of its own, in time linear in the body, rather than by recursion: a body may nest 500,000 levels deep within its
 * size limit.
 */
function firstIllFormedString(body: unknown): string[] | undefined {
  const pending: Visit[] = [{ value: body }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { value } = visit;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) {
        return pathOf(visit);
      }
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) {
          return [...pathOf(visit), key];
        }
        pending.push({ value: inner, key, parent: visit });
      }
    }
  }
  return undefined;
}

/**
 * Refuses a request without a body for an operation whose body is required. express-openapi-validator lets an
 * absent body through (it validates only a body that was read); runs after it, once the operation is known, so that
 * a method the path does not support still gets its 405.
 */
export function requireDocumentedBody(req: Request, _res: Response, next: NextFunction): void {
  const required = openApiMetadataOf(req)?.schema?.requestBody?.required === true;
  next(
    required && req.body === undefined
      ? HttpError.of('invalid_request_error', 'body: required; send a JSON object')
      : undefined,
  );
}

/**
 * Reads the JSON body of a request that may have one, strictly: uncompressed (`content-encoding` is absent or
 * `identity`, else 415), not empty, UTF-8, at most the spec's body limit, and every string valid Unicode (a
 * `\ud800` escape is refused with 400, never stored as something else). A body sent with GET is ignored.
 */
export function jsonBody() {
  const parse = express.json({ limit: MAX_REQUEST_BODY_BYTES, strict: true, inflate: false, verify: checkBytes });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!METHODS_WITH_BODY.has(req.method)) {
      next();
      return;
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      next(unsupportedEncoding());
      return;
    }
    // A request with neither content-length nor transfer-encoding has no body at all (RFC 9112, 6.3): there is
    // nothing to read, and whether the operation needs one is checked once it is known (requireDocumentedBody).
    if (!typeIs.hasBody(req)) {
      next();
      return;
    }
    // JSON is UTF-8 (RFC 8259); the parser would also decode UTF-16 and UTF-32 when the content type says so.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
      next(unsupportedMediaType('the request body must be application/json in UTF-8'));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      const path = firstIllFormedString(req.body);
      if (path === undefined) {
        next();
        return;
      }
      const field = path.length > 0 && path.every((part) => quotable(part, 'name')) ? path.join('.') : 'body';
      next(HttpError.of('invalid_request_error', `${field}: must be valid Unicode; it holds an unpaired surrogate`));
    });
  };
}
