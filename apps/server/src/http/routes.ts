import type { ApiVersion, OperationIdOf } from '@apikeys/api-types';
import type { OpenApiDocument } from '@apikeys/spec';
import { Router as createRouter, type Router } from 'express';
import { type OperationHandler, type OperationHandlers, toExpressHandler } from './typed-handler.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One operation of the spec: its method, its path, its operationId, and whether it takes no credential. */
export interface SpecOperation {
  method: (typeof HTTP_METHODS)[number];
  path: string;
  operationId: string;
  /** Declared with `security: []`: no credential (the probes). */
  public: boolean;
}

/** A spec path (`/v1/organizations/api_keys/{api_key_id}`) as Express writes it (`.../:api_key_id`). */
export function expressPath(specPath: string): string {
  return specPath.replace(/\{([^}]+)\}/g, ':$1');
}

/** Every operation the spec declares. */
export function specOperations(document: OpenApiDocument): SpecOperation[] {
  const found: SpecOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as { operationId?: string; security?: unknown[] } | undefined;
      if (operation?.operationId) {
        found.push({ method, path, operationId: operation.operationId, public: operation.security?.length === 0 });
      }
    }
  }
  return found;
}

/** Routes each operation of the spec to its handler; paths and methods come from the spec, never from code. */
export function routesFromSpec<V extends ApiVersion>(
  document: OpenApiDocument,
  handlers: OperationHandlers<V>,
): Router {
  // Paths match exactly as the spec writes them: no trailing slash, no other letter case.
  const router = createRouter({ strict: true, caseSensitive: true });
  for (const { method, path, operationId } of specOperations(document)) {
    const handler = handlers[operationId as OperationIdOf<V>];
    if (!handler) {
      throw new Error(`spec operation ${operationId} has no handler`);
    }
    // The operationId comes from the spec at run time, so the handler's exact operation type is not known here.
    router[method](expressPath(path), toExpressHandler(handler as OperationHandler<V, OperationIdOf<V>>));
  }
  return router;
}
