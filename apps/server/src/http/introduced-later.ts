import { type ApiVersion, OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import type { OpenApiDocument } from '@apikeys/spec';
import { Router as createRouter, type RequestHandler } from 'express';
import { expressPath, specOperations } from '../spec/spec-operations.js';
import { HttpError } from './errors/http-error.js';

/**
 * Answers a request for an operation that a later version introduced, which the document of the request's version
 * does not have, with a 400 naming that version: without it the request would get a 404 or a 405, as if the
 * operation did not exist at all.
 */
export function refuseLaterOperations(
  version: ApiVersion,
  own: OpenApiDocument,
  latest: OpenApiDocument,
): RequestHandler {
  const router = createRouter({ strict: true, caseSensitive: true });
  const known = new Set(specOperations(own).map(({ operationId }) => operationId));
  const uses = `this request uses ${version}`;
  for (const { method, path, operationId } of specOperations(latest)) {
    if (known.has(operationId)) {
      continue;
    }
    const since = OPERATION_INTRODUCED_IN[operationId as keyof typeof OPERATION_INTRODUCED_IN] ?? 'a later version';
    const message = `vendor-version: ${operationId} is available from API version ${since}; ${uses}`;
    router[method](expressPath(path), (_req, _res, next) => {
      next(HttpError.of('invalid_request_error', message));
    });
  }
  // A router answers OPTIONS itself for a path it has routes for; OPTIONS is the validator's to refuse (405).
  return (req, res, next) => (req.method === 'OPTIONS' ? next() : router(req, res, next));
}
