import { API_VERSIONS, MAX_REQUEST_BODY_BYTES } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import type { Store } from '@apikeys/store';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { ApiKeysService } from './domain/api-keys-service.js';
import { requireApiVersion } from './http/api-version.js';
import { authenticate } from './http/authenticate.js';
import { handleErrors, lastResort } from './http/errors/handle-errors.js';
import { answerNoRoute } from './http/errors/no-route.js';
import { operationHandlers } from './http/operations/index.js';
import { rejectRepeatedQueryParameters } from './http/reject-repeated-query-parameters.js';
import { rejectTrailingSlash } from './http/reject-trailing-slash.js';
import { assignRequestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { routesFromSpec } from './http/routes.js';
import { validateWithSpec } from './http/validate-with-spec.js';

export interface AppDependencies {
  store: Store;
  logger: Logger;
  /** The OpenAPI document; spec/openapi.yaml when not given. */
  document?: OpenApiDocument;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** The JSON parser reads an empty body as `{}`; a required body must be sent, so an empty one is refused. */
function rejectEmptyBody(_req: unknown, _res: unknown, buffer: Buffer): void {
  if (buffer.length === 0) {
    throw Object.assign(new Error('the request body is empty'), { status: 400, type: 'entity.empty' });
  }
}

/**
 * Builds the Express app; it never listens. The pipeline, in order: request ID, request log, API version,
 * authentication, single-valued query parameters, exact paths, JSON body parsing, spec validation of the request
 * (and, by wrapping `res.json`, of the response), the operation handlers, and the central error handler.
 */
export function createApp({ store, logger, document = loadSpec() }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Paths match exactly as the spec writes them: no trailing slash, no other letter case. The validator reads
  // these two settings too, so it never matches an operation the router would not.
  app.set('strict routing', true);
  app.set('case sensitive routing', true);

  const parseJson = express.json({ limit: MAX_REQUEST_BODY_BYTES, strict: true, verify: rejectEmptyBody });

  const api = express.Router({ strict: true, caseSensitive: true });
  api.use(assignRequestId);
  api.use(requestLog(logger));
  api.use(requireApiVersion(API_VERSIONS));
  api.use(authenticate(store));
  api.use(rejectRepeatedQueryParameters);
  api.use(rejectTrailingSlash);
  // Bodies are read only where an operation can take one; a body sent with GET is ignored.
  api.use((req: Request, res: Response, next: NextFunction) =>
    METHODS_WITH_BODY.has(req.method) ? parseJson(req, res, next) : next(),
  );
  api.use(validateWithSpec(document));
  api.use(routesFromSpec(document, operationHandlers(new ApiKeysService(store))));
  api.use(answerNoRoute);
  api.use(handleErrors(logger));

  // When the response validator refuses a body that the error handler sends, it passes its error to the `next` it
  // captured earlier, which by then leads past every handler of `api`. That error lands in `lastResort` instead
  // of Express's HTML error page. (`api` is a router rather than a mounted app: a mounted app swaps the prototypes
  // of every request and response twice.)
  app.use(api);
  app.use(lastResort(logger));
  return app;
}
