import type { OpenApiDocument } from '@apikeys/spec';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { specOperations } from '../spec/spec-operations.js';

/**
 * The paths of the probes: paths whose every operation the spec declares with `security: []` (`/health`, `/ready`).
 * They take no admin key and no version header, and are not rate limited, so that a load balancer can call them as
 * they are.
 */
export function probePaths(document: OpenApiDocument): ReadonlySet<string> {
  const operations = specOperations(document);
  return new Set(
    operations
      .filter(({ path }) => operations.every((operation) => operation.path !== path || operation.public))
      .map(({ path }) => path),
  );
}

/** Runs `middleware` on every request but the probes'. */
export function exceptProbes(probes: ReadonlySet<string>, middleware: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    probes.has(req.path) ? next() : middleware(req, res, next);
}
