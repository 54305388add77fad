import { KEY_USAGE_REPORT } from '@apikeys/api-types';
import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, Response } from 'express';
import { describeWait, type RequestLimiter, type Verdict } from '../rate-limits/request-limiter.js';
import { openApiMetadataOf } from '../spec/openapi-metadata.js';
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
    applyVerdict(await limiter.consumeRequest(callerKeyId(callerOf(res))), res, next);
  };
}

/**
 * How many requests of the caller's budget a request of an operation counts as, once its body is read: a usage
 * report, one per `KEY_USAGE_REPORT.usesPerRequest` uses (the spec's `x-uses-per-request`). Every other, one.
 */
const WEIGHTS: Readonly<Record<string, (body: unknown) => number>> = {
  reportKeyUsage: (body) =>
    Math.ceil((body as { uses: readonly unknown[] }).uses.length / KEY_USAGE_REPORT.usesPerRequest),
};

/**
 * Counts what a request weighs beyond the one request `limitRequests` counted when it came (see `WEIGHTS`), once the
 * validator has read its body and operation: past the budget, it is refused with 429 before its handler runs.
 */
export function limitRequestWeights(limiter: RequestLimiter) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const weigh = WEIGHTS[openApiMetadataOf(req)?.schema?.operationId ?? ''];
    const beyondOne = weigh ? weigh(req.body) - 1 : 0;
    if (beyondOne <= 0) {
      next();
      return;
    }
    applyVerdict(await limiter.consumeRequest(callerKeyId(callerOf(res)), beyondOne), res, next);
  };
}

/** Sets the budget's headers from the limiter's verdict, then goes on, or refuses the request with 429. */
function applyVerdict(verdict: Verdict | undefined, res: Response, next: NextFunction): void {
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
  const key = callerOf(res).kind === 'admin_key' ? 'admin key' : 'verifier key';
  next(
    HttpError.of('rate_limit_error', `too many requests for this ${key}; retry after ${describeWait(wait)}`, {
      headers: { 'retry-after': String(wait) },
    }),
  );
}
