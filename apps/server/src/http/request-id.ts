import { newId } from '@apikeys/store';
import type { NextFunction, Request, Response } from 'express';

/** A new request ID, `req_` followed by 24 random characters. */
export function newRequestId(): string {
  return newId('req');
}

/** Gives every request a unique ID, sent back in the `request-id` header of every response. */
export function assignRequestId(_req: Request, res: Response, next: NextFunction): void {
  const requestId = newRequestId();
  res.locals.requestId = requestId;
  res.setHeader('request-id', requestId);
  next();
}

/** The ID assigned to this request. */
export function requestIdOf(res: Response): string {
  return res.locals.requestId as string;
}
