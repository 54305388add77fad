import type { OpenApiDocument } from '@apikeys/spec';
import type { Request } from 'express';
import { openApiMetadataOf } from '../spec/openapi-metadata.js';
import { specOperations } from '../spec/spec-operations.js';

/** The label of a request that matches no operation of the spec. */
export const UNMATCHED_OPERATION = 'unmatched';

/** A spec path as an exact, case-sensitive pattern: each `{parameter}` stands for one non-empty segment. */
function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

/**
 * Tells which operation of the spec a request is for, as a metric label: the operationId that
 * express-openapi-validator found, or, for a request refused before it ran (401, 429, a missing version), the
 * operation whose method and path template match. Anything else is `unmatched`: never the path itself, which
 * would let callers create any number of series.
 */
export function requestOperation(document: OpenApiDocument): (req: Request) => string {
  const operations = specOperations(document).map(({ method, path, operationId }) => ({
    method: method.toUpperCase(),
    pattern: pathPattern(path),
    operationId,
  }));
  return (req) =>
    openApiMetadataOf(req)?.schema?.operationId ??
    operations.find(({ method, pattern }) => method === req.method && pattern.test(req.path))?.operationId ??
    UNMATCHED_OPERATION;
}
