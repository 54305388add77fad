import { quotable } from '@apikeys/permissions';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

/** Where a request went, as an error message may say it: the path only if each segment looks like a name or an ID. */
export function onPath(path: string): string {
  const shaped = path
    .split('/')
    .every((segment) => segment === '' || quotable(segment, 'name') || quotable(segment, 'id'));
  return shaped ? `on ${path}` : 'on this path';
}

/** The 404 of a path (or letter case, or trailing slash) that the spec does not declare. */
export function noRoute(req: Request): HttpError {
  return HttpError.of('not_found_error', `no route for ${req.method} ${onPath(req.path)}`);
}

/** Answers requests that reached no route (the validator normally answers these first). */
export function answerNoRoute(req: Request, _res: Response, next: NextFunction): void {
  next(noRoute(req));
}
