import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Metrics } from './metrics.js';
import { requestOperation } from './request-operation.js';

/**
 * Counts every request, and observes its duration, when its response ends ('close', which also comes when the
 * client goes away first: such a request counts with the status `aborted`). The probes count here like any
 * operation, since they are not logged at info level.
 */
export function recordRequests(metrics: Metrics, document: OpenApiDocument): RequestHandler {
  const operationOf = requestOperation(document);
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('close', () => {
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      metrics.recordRequest(operationOf(req), status, (performance.now() - started) / 1000);
    });
    next();
  };
}
