import type { Response } from 'express';

/**
 * Sends every JSON body. It goes through `res.json`, the only path express-openapi-validator checks against
 * the spec, so no response can bypass validation by being sent another way.
 */
export function sendJson<T>(res: Response, status: number, body: T): void {
  res.status(status).json(body);
}
