import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, Response } from 'express';
import pLimit from 'p-limit';
import { specOperations } from '../spec/spec-operations.js';

/**
 * The operations whose requests this process serves one at a time once their body has been read: a usage report
 * holds up to a thousand uses, whose checks and lookups take several milliseconds on the event loop. Served in turn
 * (each in steps, with turns of the event loop between its statements), a burst of them delays another request, a
 * probe's say, by one step rather than by all of them. The body is read before the turn is taken, so a client that
 * sends its body slowly holds no one up.
 */
export const ONE_AT_A_TIME: ReadonlySet<string> = new Set(['reportKeyUsage']);

/** Serves the requests of `ONE_AT_A_TIME` operations one at a time, from the validation of their body to its answer. */
export function oneAtATime(document: OpenApiDocument) {
  const requests = new Set(
    specOperations(document)
      .filter(({ operationId }) => ONE_AT_A_TIME.has(operationId))
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`),
  );
  const turn = pLimit(1);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!requests.has(`${req.method} ${req.path}`)) {
      next();
      return;
    }
    void turn(
      () =>
        new Promise<void>((done) => {
          res.once('close', () => done());
          next();
        }),
    );
  };
}
