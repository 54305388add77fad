import type { NextFunction, Request, Response } from 'express';
import { noRoute } from './errors/no-route.js';

/**
 * Refuses a path with a trailing slash as an unknown path. The router matches paths exactly, but the validator's
 * path matching ignores a trailing slash whatever the `strict routing` setting says, and would otherwise bind the
 * request to an operation whose documented responses do not include this 404.
 */
export function rejectTrailingSlash(req: Request, _res: Response, next: NextFunction): void {
  if (req.path.length > 1 && req.path.endsWith('/')) {
    next(noRoute(req));
    return;
  }
  next();
}
