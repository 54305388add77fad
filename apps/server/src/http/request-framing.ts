import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './errors/http-error.js';

/** The scheme and authority of an absolute-form request target: `http://host:8080`. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * Takes the request target, `Host` and the body's framing as HTTP/1.1 defines them (RFC 9112), before anything
 * routes the request:
 * - an absolute-form target (`GET http://host/v1/...`, which a server must accept) is read as its path and query;
 * - a fragment (`#...`), which no request target may hold, and a missing `Host` on HTTP/1.1 are refused with 400
 *   in the API's error shape (Node's own answer to a missing Host would be a bare 400);
 * - a `transfer-encoding` whose final coding is not `chunked` leaves the body's length unknown: 400, and the
 *   connection is closed (6.3), rather than reading until the client gives up. Other codings are not supported.
 */
export function checkRequestFraming(req: Request, res: Response, next: NextFunction): void {
  // Only the scheme and authority go: the path stays as sent (a URL parser would resolve `..`, which the
  // origin-form of the same path does not get).
  const absolute = ABSOLUTE_FORM.exec(req.url);
  if (absolute) {
    req.url = `/${req.url.slice(absolute[0].length).replace(/^\//, '')}`;
    req.originalUrl = req.url;
  }
  if (req.url.includes('#')) {
    next(HttpError.of('invalid_request_error', 'path: a request target holds no fragment (#)'));
    return;
  }
  const transferEncoding = req.headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    res.setHeader('connection', 'close');
    next(HttpError.of('invalid_request_error', 'transfer-encoding: only chunked is supported'));
    return;
  }
  if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined) {
    next(HttpError.of('invalid_request_error', 'host: header is required'));
    return;
  }
  next();
}
