import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

/** The 404 of a path (or letter case, or trailing slash) that the spec does not declare. */
export function noRoute(req: Request): HttpError {
  return HttpError.of('not_found_error', `no route for ${req.method} ${req.path}`);
}

/** Answers requests that reached no route (the validator normally answers these first). */
export function answerNoRoute(req: Request, _res: Response, next: NextFunction): void {
  next(noRoute(req));
}
