import { parse as parseQuery } from 'node:querystring';
import { API_VERSIONS } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import type { Store } from '@apikeys/store';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { ApiKeysService } from './domain/api-keys-service.js';
import { requireApiVersion } from './http/api-version.js';
import { authenticate } from './http/authenticate.js';
import { handleErrors, lastResort } from './http/errors/handle-errors.js';
import { answerNoRoute } from './http/errors/no-route.js';
import { jsonBody, requireDocumentedBody } from './http/json-body.js';
import { limitRequests } from './http/limit-requests.js';
import { operationHandlers } from './http/operations/index.js';
import { rejectTrailingSlash } from './http/reject-trailing-slash.js';
import { checkRequestFraming } from './http/request-framing.js';
import { assignRequestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { routesFromSpec } from './http/routes.js';
import { strictQueryParameters } from './http/strict-query-parameters.js';
import { validateWithSpec } from './http/validate-with-spec.js';
import type { RequestLimiter } from './rate-limits/request-limiter.js';

export interface AppDependencies {
  store: Store;
  logger: Logger;
  /** The OpenAPI document; spec/openapi.yaml when not given. */
  document?: OpenApiDocument;
  /** Rate limits per admin key and per failing address; no limits when not given. */
  limiter?: RequestLimiter | undefined;
}

/**
 * Builds the Express app; it never listens. The pipeline, in order: request ID, request log, request framing, API
 * version, authentication (failures limited per address), the admin key's rate limit, strict query parameters,
 * exact paths, the strict JSON body, spec validation of the request (and, by wrapping `res.json`, of the response),
 * the operation handlers, and the central error handler.
 */
export function createApp({ store, logger, document = loadSpec(), limiter }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Paths match exactly as the spec writes them: no trailing slash, no other letter case. The validator reads
  // these two settings too, so it never matches an operation the router would not.
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  // Every query parameter reaches the validator: Node's querystring would keep only the first 1,000 `&`-separated
  // parts (empty ones included), silently dropping a filter sent after them. The header size limit bounds the rest.
  app.set('query parser', (query: string) => parseQuery(query, undefined, undefined, { maxKeys: 0 }));
  // The API has no conditional requests: `If-None-Match: *` must not turn a response into a bare 304.
  Object.defineProperty(app.request, 'fresh', { get: () => false, configurable: true });

  const api = express.Router({ strict: true, caseSensitive: true });
  api.use(assignRequestId);
  api.use(requestLog(logger));
  api.use(checkRequestFraming);
  api.use(requireApiVersion(API_VERSIONS));
  api.use(authenticate(store, limiter));
  if (limiter?.limitsRequests) {
    api.use(limitRequests(limiter));
  }
  api.use(strictQueryParameters(document));
  api.use(rejectTrailingSlash);
  api.use(jsonBody());
  api.use(validateWithSpec(document));
  api.use(requireDocumentedBody);
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
