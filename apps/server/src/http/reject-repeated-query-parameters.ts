import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './errors/http-error.js';

/**
 * Refuses a query parameter given more than once (`limit=1&limit=2`). Every parameter of this API takes one value;
 * without this check the validator reports the array as a type error, which hides what went wrong.
 */
export function rejectRepeatedQueryParameters(req: Request, _res: Response, next: NextFunction): void {
  for (const [name, value] of Object.entries(req.query)) {
    if (Array.isArray(value)) {
      next(HttpError.of('invalid_request_error', `${name}: must be a single value (query parameter)`));
      return;
    }
  }
  next();
}
