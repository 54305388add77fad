import { parse as parseQuery } from 'node:querystring';
import { API_VERSIONS } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';
import type { Store } from '@apikeys/store';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiKeysService } from './domain/api-keys-service.js';
import { Readiness } from './health/readiness.js';
import { type WarmUpReport, warmUpOperations } from './health/warm-up.js';
import { requireApiVersion } from './http/api-version.js';
import { authenticate } from './http/authenticate.js';
import { handleErrors, lastResort } from './http/errors/handle-errors.js';
import { answerNoRoute } from './http/errors/no-route.js';
import { jsonBody, requireDocumentedBody } from './http/json-body.js';
import { limitRequests } from './http/limit-requests.js';
import { operationHandlers } from './http/operations/index.js';
import { exceptProbes, probePaths } from './http/probes.js';
import { apiReference } from './http/reference/api-reference.js';
import { rejectTrailingSlash } from './http/reject-trailing-slash.js';
import { checkRequestFraming } from './http/request-framing.js';
import { assignRequestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { routesFromSpec } from './http/routes.js';
import { strictQueryParameters } from './http/strict-query-parameters.js';
import { validateWithSpec } from './http/validate-with-spec.js';
import type { Metrics } from './metrics/metrics.js';
import { recordRequests } from './metrics/record-requests.js';
import type { RequestLimiter } from './rate-limits/request-limiter.js';

export interface AppDependencies {
  store: Store;
  logger: Logger;
  /** The OpenAPI document; spec/openapi.yaml when not given. */
  document?: OpenApiDocument;
  /** Rate limits per admin key and per failing address; no limits when not given. */
  limiter?: RequestLimiter | undefined;
  /** What `GET /ready` reports; `listen()` marks it started once the app is warm. A new one when not given. */
  readiness?: Readiness;
  /** Where requests are counted and timed; nothing is recorded (and nothing is paid for) when not given. */
  metrics?: Metrics | undefined;
}

/**
 * Builds the Express app; it never listens. The pipeline, in order: request ID, request log, request framing, the
 * API reference (`/docs`, `/openapi.yaml`, `/openapi.json`), API version, authentication (failures limited per
 * address), the admin key's rate limit, strict query parameters, exact paths, the strict JSON body, spec validation
 * of the request (and, by wrapping `res.json`, of the response), the operation handlers, and the central error
 * handler. The probes (`/health`, `/ready`) skip the version, authentication and rate limit, and are logged at
 * debug level only.
 */
export function createApp({
  store,
  logger,
  document = loadSpec(),
  limiter,
  readiness = new Readiness(store),
  metrics,
}: AppDependencies): Express {
  const app = configuredExpress();
  const probes = probePaths(document);
  const api = express.Router({ strict: true, caseSensitive: true });
  if (metrics) {
    api.use(recordRequests(metrics, document));
  }
  api.use(assignRequestId);
  api.use(requestLog(logger, probes));
  api.use(checkRequestFraming);
  // The reference page and the spec itself, outside the contract: no version header, no admin key.
  api.use(apiReference());
  api.use(exceptProbes(probes, requireApiVersion(API_VERSIONS)));
  api.use(exceptProbes(probes, authenticate(store, limiter)));
  if (limiter?.limitsRequests) {
    api.use(exceptProbes(probes, limitRequests(limiter)));
  }
  const operations: OperationStage[] = [
    strictQueryParameters(document),
    rejectTrailingSlash,
    jsonBody(),
    ...validateWithSpec(document),
    requireDocumentedBody,
    routesFromSpec(document, operationHandlers(new ApiKeysService(store), readiness)),
    answerNoRoute,
    handleErrors(logger),
  ];
  api.use(operations);

  // When the response validator refuses a body that the error handler sends, it passes its error to the `next` it
  // captured earlier, which by then leads past every handler of `api`. That error lands in `lastResort` instead
  // of Express's HTML error page. (`api` is a router rather than a mounted app: a mounted app swaps the prototypes
  // of every request and response twice.)
  app.use(api);
  app.use(lastResort(logger));
  warmUps.set(app, () => warmUpOperations(configuredExpress(), operations, lastResort(logger), document));
  return app;
}

/** One stage of the operations' part of the pipeline: what follows authentication. */
type OperationStage = RequestHandler | ErrorRequestHandler;

/** An Express app with the settings every app of the API shares. */
function configuredExpress(): Express {
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
  return app;
}

const warmUps = new WeakMap<Express, () => Promise<WarmUpReport>>();

/**
 * Sends one request per operation of the spec through the app's operation stages (see `warmUpOperations`), so that
 * the validator has compiled every operation before the first caller arrives. Resolves with what each answered.
 */
export function warmUp(app: Express): Promise<WarmUpReport> {
  const run = warmUps.get(app);
  if (!run) {
    throw new TypeError('warmUp() takes an app made by createApp()');
  }
  return run();
}
