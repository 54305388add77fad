import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { openApiMetadataOf } from '../spec/openapi-metadata.js';
import { requestIdOf } from './request-id.js';

/**
 * Logs one line per request when its response ends: request ID, method, route, status and duration.
 * Only these fields are logged: never headers, query strings or bodies, so no secret can reach the log.
 * Requests for the `quiet` paths (the probes, which a load balancer sends every second or so) are logged at debug.
 */
export function requestLog(logger: Logger, quiet: ReadonlySet<string> = new Set()) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const level = quiet.has(req.path) ? 'debug' : 'info';
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const route = openApiMetadataOf(req)?.openApiRoute ?? null;
      logger[level](
        {
          request_id: requestIdOf(res),
          method: req.method,
          route,
          status: res.statusCode,
          duration_ms: Math.round(durationMs * 1000) / 1000,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    });
    next();
  };
}
