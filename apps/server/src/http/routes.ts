import type { ApiVersion, OperationIdOf } from '@apikeys/api-types';
import type { OpenApiDocument } from '@apikeys/spec';
import { Router as createRouter, type NextFunction, type Request, type Response, type Router } from 'express';
import { expressPath, type SpecOperation, specOperations } from '../spec/spec-operations.js';
import { callerOf } from './authenticate.js';
import { HttpError } from './errors/http-error.js';
import { type OperationHandler, type OperationHandlers, toExpressHandler } from './typed-handler.js';

/**
 * Routes each operation of the spec to its handler; paths and methods come from the spec, never from code. A verifier
 * key calling an operation that does not accept one gets a 403 naming those that do in `latest`, the latest version.
 */
export function routesFromSpec<V extends ApiVersion>(
  document: OpenApiDocument,
  handlers: OperationHandlers<V>,
  latest: OpenApiDocument,
): Router {
  // Paths match exactly as the spec writes them: no trailing slash, no other letter case.
  const router = createRouter({ strict: true, caseSensitive: true });
  const refuseVerifierKeys = verifierKeyRefusal(specOperations(latest).filter((op) => op.acceptsVerifierKeys));
  for (const { method, path, operationId, public: open, acceptsVerifierKeys } of specOperations(document)) {
    const handler = handlers[operationId as OperationIdOf<V>];
    if (!handler) {
      throw new Error(`spec operation ${operationId} has no handler`);
    }
    // The operationId comes from the spec at run time, so the handler's exact operation type is not known here.
    const handle = toExpressHandler(handler as OperationHandler<V, OperationIdOf<V>>);
    router[method](expressPath(path), ...(open || acceptsVerifierKeys ? [] : [refuseVerifierKeys]), handle);
  }
  return router;
}

/**
 * The 403 of a verifier key calling an operation that does not list verifier keys in its `security`; its message
 * names those that do (`allowed`).
 */
function verifierKeyRefusal(allowed: SpecOperation[]) {
  const names = allowed.map(({ method, path }) => `${method.toUpperCase()} ${path}`);
  const message = `a verifier key may only call the verification operations (${names.join(', ')})`;
  return (_req: Request, res: Response, next: NextFunction): void => {
    if (callerOf(res)?.kind === 'verifier_key') {
      next(HttpError.of('permission_error', message));
      return;
    }
    next();
  };
}
