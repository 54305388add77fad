import type { NextFunction, Request, Response } from 'express';
import { describeWait, type RequestLimiter } from '../rate-limits/request-limiter.js';
import { callerOf } from './authenticate.js';
import { HttpError } from './errors/http-error.js';

/**
 * Counts each authenticated request against its admin key's budget: every response carries the budget in
 * `ratelimit-*` headers, and a request over it is refused with 429 and `retry-after` before it does anything.
 */
export function limitRequests(limiter: RequestLimiter) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const verdict = await limiter.consumeRequest(callerOf(res).adminKeyId);
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
