import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, Response } from 'express';
import { describeWait, type RequestLimiter } from '../rate-limits/request-limiter.js';
import { specOperations } from '../spec/spec-operations.js';
import { callerKeyId, callerOf } from './authenticate.js';
import { HttpError } from './errors/http-error.js';

/**
 * The requests of the operations the spec declares `x-rate-limited: false`, as `METHOD path`. Only operations
 * without path parameters can be declared so: their requests are recognised by their path alone.
 */
function unlimitedRequests(document: OpenApiDocument): ReadonlySet<string> {
  const unlimited = specOperations(document).filter((operation) => !operation.rateLimited);
  for (const { operationId, path } of unlimited) {
    if (path.includes('{')) {
      throw new Error(`${operationId} has path parameters: it cannot be declared x-rate-limited: false`);
    }
  }
  return new Set(unlimited.map(({ method, path }) => `${method.toUpperCase()} ${path}`));
}

/**
 * Counts each authenticated request against its key's budget: every response carries the budget in `ratelimit-*`
 * headers, and a request over it is refused with 429 and `retry-after` before it does anything. The requests of
 * operations the spec declares `x-rate-limited: false` (verification) are not counted.
 */
export function limitRequests(limiter: RequestLimiter, document: OpenApiDocument) {
  const unlimited = unlimitedRequests(document);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (unlimited.has(`${req.method} ${req.path}`)) {
      next();
      return;
    }
    const verdict = await limiter.consumeRequest(callerKeyId(callerOf(res)));
    if (verdict === undefined) {
      next();
      return;
    }
    res.setHeader('ratelimit-limit', verdict.limit);
    res.setHeader('ratelimit-reset', verdict.resetSeconds);
    if (verdict.allowed) {
      res.setHeader('ratelimit-remaining', verdict.remaining);
      next();
      return;
    }
    res.setHeader('ratelimit-remaining', 0);
    const wait = verdict.retryAfterSeconds;
    next(
      HttpError.of('rate_limit_error', `too many requests for this admin key; retry after ${describeWait(wait)}`, {
        headers: { 'retry-after': String(wait) },
      }),
    );
  };
}
