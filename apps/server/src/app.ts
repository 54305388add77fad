import type { Store } from '@apikeys/store';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Logger } from 'pino';
import { ApiKeysService } from './domain/api-keys-service.js';
import { requireApiVersion } from './http/api-version.js';
import { authenticate } from './http/authenticate.js';
import { handleErrors, lastResort, notFound } from './http/errors.js';
import { rejectTrailingSlash } from './http/exact-paths.js';
import { operationHandlers } from './http/operations/index.js';
import { assignRequestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { routesFromSpec } from './http/routes.js';
import { rejectRepeatedQueryParameters } from './http/single-query-values.js';
import { loadSpecFacts, type SpecFacts } from './spec.js';

export interface AppDependencies {
  store: Store;
  logger: Logger;
  /** The spec facts; loaded from spec/openapi.yaml when not given. */
  spec?: SpecFacts;
}

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** The JSON parser reads an empty body as `{}`; a required body must be sent, so an empty one is refused. */
function rejectEmptyBody(_req: unknown, _res: unknown, buffer: Buffer): void {
  if (buffer.length === 0) {
    throw Object.assign(new Error('the request body is empty'), { status: 400, type: 'entity.empty' });
  }
}

/**
 * Builds the Express app; it never listens. The pipeline, in order: request ID, request log, API version,
 * authentication, single-valued query parameters, exact paths, JSON body parsing, spec validation of the request (and, by wrapping `res.json`, of the
 * response), the operation handlers, and the central error handler.
 */
export function createApp({ store, logger, spec = loadSpecFacts() }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Paths match exactly as the spec writes them: no trailing slash, no other letter case. The validator reads
  // these two settings too, so it never matches an operation the router would not.
  app.set('strict routing', true);
  app.set('case sensitive routing', true);

  const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: true, verify: rejectEmptyBody });

  const api = express.Router({ strict: true, caseSensitive: true });
  api.use(assignRequestId);
  api.use(requestLog(logger));
  api.use(requireApiVersion(spec.supportedVersions));
  api.use(authenticate(store));
  api.use(rejectRepeatedQueryParameters);
  api.use(rejectTrailingSlash);
  // Bodies are read only where an operation can take one; a body sent with GET is ignored.
  api.use((req: Request, res: Response, next: NextFunction) =>
    METHODS_WITH_BODY.has(req.method) ? parseJson(req, res, next) : next(),
  );
  api.use(
    OpenApiValidator.middleware({
      // The validator mutates the document it is given; it gets its own copy.
      apiSpec: structuredClone(spec.document) as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: true,
      validateSecurity: false,
      // The spec takes no multipart bodies: no upload middleware on the path of every request.
      fileUploader: false,
      // Dereferenced schemas avoid the coercion of `$ref` enum parameters as arrays
      // (https://github.com/cdimascio/express-openapi-validator/issues/1119).
      $refParser: { mode: 'dereference' },
    }),
  );
  api.use(routesFromSpec(spec.document, operationHandlers(new ApiKeysService(store), spec)));
  api.use(notFound);
  api.use(handleErrors(logger));

  // When the response validator refuses a body that the error handler sends, it passes its error to the `next` it
  // captured earlier, which by then leads past every handler of `api`. That error lands in `lastResort` instead
  // of Express's HTML error page. (`api` is a router rather than a mounted app: a mounted app swaps the prototypes
  // of every request and response twice.)
  app.use(api);
  app.use(lastResort(logger));
  return app;
}
