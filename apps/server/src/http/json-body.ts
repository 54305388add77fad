import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { MAX_REQUEST_BODY_BYTES } from '@apikeys/api-types';
import { quotable } from '@apikeys/permissions';
import express, { type NextFunction, type Request, type Response } from 'express';
import typeIs from 'type-is';
import { openApiMetadataOf } from '../spec/openapi-metadata.js';
import {
  isBodyParserError,
  UTF8_ONLY,
  unsupportedEncoding,
  unsupportedMediaType,
} from './errors/body-parser-errors.js';
import { HttpError } from './errors/http-error.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

const JSON_MEDIA_TYPES = ['application/json'];

/** The type of the error `checkBytes` raises for a body of no bytes, which is then read as no body. */
const EMPTY_BODY = 'entity.empty';

/** The requests whose chunked body ended before its first byte: no body, as a content-length of 0 is. */
const emptyChunkedBodies = new WeakSet<IncomingMessage>();

/**
 * Whether a request sends a body: a chunked one (unless it turned out empty), or a content-length above 0. A
 * content-length of 0 is no body, as is neither header (RFC 9112, 6.3); whether the operation needs one is checked
 * once it is known.
 */
function sendsBody(req: IncomingMessage): boolean {
  if (emptyChunkedBodies.has(req)) {
    return false;
  }
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Waits for a chunked body's first byte or its end, leaving the bytes in the stream, then calls `then`. A body
 * that ends at once is no body: whatever its content type says, it is then read as if it had a content-length of
 * 0. A body the HTTP parser refuses first gets neither; its 400 is answered elsewhere (answerClientError).
 */
function whenChunkedBodyStarts(req: Request, res: Response, then: () => void): void {
  const settle = (empty: boolean) => {
    req.off('readable', onReadable).off('end', onEnd);
    if (empty) {
      emptyChunkedBodies.add(req);
      // Nothing is left to read; resuming lets the request end.
      req.resume();
    } else {
      // Waiting for the first byte counts as reading, after which Node no longer drops what the response left
      // unread (a body that is not JSON, say): it is dropped here instead, as Node would.
      res.once('finish', () => req.resume());
    }
    then();
  };
  // 'readable' with nothing buffered means the body has ended; a body that had ended before this listens gets 'end'.
  const onReadable = () => settle(req.readableLength === 0);
  const onEnd = () => settle(true);
  req.on('readable', onReadable).once('end', onEnd);
}

/**
 * Checks the raw bytes before parsing: the JSON parser reads an empty body as `{}`, but an empty body is no body;
 * and JSON is UTF-8, which the parser would otherwise decode leniently, turning bad bytes into U+FFFD.
 */
function checkBytes(_req: unknown, _res: unknown, buffer: Buffer): void {
  if (buffer.length === 0) {
    throw Object.assign(new Error('the request body is empty'), { status: 400, type: EMPTY_BODY });
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
  // Pushed, then reversed: `unshift` would take time quadratic in the depth (500,000 levels fit in a body).
  for (let current = visit; current?.key !== undefined; current = current.parent) {
    path.push(current.key);
  }
  return path.reverse();
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
 * Holds a request to its operation's documented body: a body the JSON parser left unread (sent without a JSON
 * content-type) is refused with 415 by every operation that takes one, an optional body included, rather than
 * ignored; and an operation whose body is required refuses a request without one. express-openapi-validator lets
 * both through (it validates only a body that was read, and allows a missing content-type where the body is
 * optional); this runs after it, once the operation is known, so that a method the path does not support still
 * gets its 405.
 */
export function requireDocumentedBody(req: Request, _res: Response, next: NextFunction): void {
  const requestBody = openApiMetadataOf(req)?.schema?.requestBody;
  if (!requestBody || req.body !== undefined) {
    next();
    return;
  }
  if (sendsBody(req) && typeIs(req, JSON_MEDIA_TYPES) === false) {
    next(unsupportedMediaType());
    return;
  }
  next(requestBody.required ? HttpError.of('invalid_request_error', 'body: required; send a JSON object') : undefined);
}

/**
 * Reads the JSON body of a request that may have one, strictly: uncompressed (`content-encoding` is absent or
 * `identity`, else 415), UTF-8, at most the spec's body limit, and every string valid Unicode (a `\ud800` escape
 * is refused with 400, never stored as something else). An empty body, a chunked one of no bytes included, is no
 * body (`req.body` stays undefined); a body that is not JSON is left unread, for `requireDocumentedBody` to
 * refuse. A body sent with GET is read and ignored.
 */
export function jsonBody() {
  const parse = express.json({ limit: MAX_REQUEST_BODY_BYTES, strict: true, inflate: false, verify: checkBytes });
  const readBody = (req: Request, res: Response, next: NextFunction): void => {
    if (!sendsBody(req)) {
      next();
      return;
    }
    // JSON is UTF-8 (RFC 8259); the parser would also decode UTF-16 and UTF-32 when the content type says so.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
      next(unsupportedMediaType(UTF8_ONLY));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (isBodyParserError(error) && error.type === EMPTY_BODY) {
        req.body = undefined;
        next();
        return;
      }
      if (error) {
        next(error);
        return;
      }
      if (req.body === undefined && typeIs(req, JSON_MEDIA_TYPES)) {
        // The parser skips a request whose connection can no longer be read (the client went away, or the HTTP
        // parser refused the body's framing): its body was never read, and no operation may run without it.
        next(HttpError.of('invalid_request_error', 'body: the request ended before its body was read'));
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
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!METHODS_WITH_BODY.has(req.method)) {
      if (sendsBody(req)) {
        // Read and dropped before the operation runs, so that its answer waits for the whole request: a body the
        // HTTP parser refuses part way then gets that 400 (answerClientError), not this answer and a stray error.
        req.once('end', () => next()).resume();
        return;
      }
      next();
      return;
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      next(unsupportedEncoding());
      return;
    }
    if (req.headers['transfer-encoding'] !== undefined) {
      whenChunkedBodyStarts(req, res, () => readBody(req, res, next));
      return;
    }
    readBody(req, res, next);
  };
}
