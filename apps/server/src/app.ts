import { parse as parseQuery } from 'node:querystring';
import { API_VERSIONS, type ApiVersion, LATEST_API_VERSION } from '@apikeys/api-types';
import type { Store } from '@apikeys/store';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { KeyChangeFeed } from './change-feed/key-change-feed.js';
import { type Clock, systemClock } from './clock.js';
import { Readiness } from './health/readiness.js';
import { endWarmUpRequests, type WarmUpReport, warmUpOperations } from './health/warm-up.js';
import { apiVersionOf, requireApiVersion } from './http/api-version.js';
import { authenticate } from './http/authenticate.js';
import { adminConsole } from './http/console/admin-console.js';
import { handleErrors, lastResort } from './http/errors/handle-errors.js';
import { answerNoRoute } from './http/errors/no-route.js';
import { refuseLaterOperations } from './http/introduced-later.js';
import { jsonBody, requireDocumentedBody } from './http/json-body.js';
import { limitRequests, limitRequestWeights } from './http/limit-requests.js';
import { oneAtATime } from './http/one-at-a-time.js';
import { versionHandlers } from './http/operations/index.js';
import { servicesOn } from './http/operations/services.js';
import { exceptProbes, probePaths } from './http/probes.js';
import { apiReference } from './http/reference/api-reference.js';
import { rejectTrailingSlash } from './http/reject-trailing-slash.js';
import { checkRequestFraming } from './http/request-framing.js';
import { assignRequestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { routesFromSpec } from './http/routes.js';
import { strictQueryParameters } from './http/strict-query-parameters.js';
import type { TrustProxy } from './http/trust-proxy.js';
import { validateWithSpec } from './http/validate-with-spec.js';
import type { Metrics } from './metrics/metrics.js';
import { recordRequests } from './metrics/record-requests.js';
import type { RequestLimiter } from './rate-limits/request-limiter.js';
import { loadVersionDocuments, type VersionDocuments } from './spec/version-documents.js';
import type { KeyCache } from './verification/key-cache.js';
import type { UsageRecorder } from './verification/usage-recorder.js';

export interface AppDependencies {
  store: Store;
  logger: Logger;
  /** The OpenAPI document of each API version; those derived from spec/openapi.yaml when not given. */
  documents?: VersionDocuments;
  /** Rate limits per admin key and per failing address; no limits when not given. */
  limiter?: RequestLimiter | undefined;
  /** What `GET /ready` reports; `warmUpAndMarkStarted()` marks it started. A new one when not given. */
  readiness?: Readiness;
  /** Where requests are counted and timed; nothing is recorded (and nothing is paid for) when not given. */
  metrics?: Metrics | undefined;
  /** What verification and authentication read keys through (`startKeyCache`); the store itself when not given. */
  keyCache?: KeyCache | undefined;
  /** Where valid verifications are noted, to record when keys were last used; nothing is recorded when not given. */
  usage?: UsageRecorder | undefined;
  /** The change feed that `streamKeyChanges` subscribes to (`startKeyChangeFeed`). */
  changeFeed: KeyChangeFeed;
  /** The admin console's build output; `apps/console/dist` when not given (`consoleBuildDirectory`). */
  consoleDirectory?: string | undefined;
  /** Whose `X-Forwarded-For` gives a request's client address (`req.ip`); no one's (0) when not given. */
  trustProxy?: TrustProxy | undefined;
  /** What the handlers read the moment of a request from; the wall clock (`systemClock`) when not given. */
  clock?: Clock | undefined;
}

/**
 * Builds the Express app; it never listens. The pipeline, in order: request ID, request log, request framing, the
 * API reference (`/docs`, `/openapi.yaml`, ...), the admin console (`/console`), API version, authentication
 * (failures limited per address), the admin key's rate limit, then the stages of the request's API version: strict
 * query parameters, exact paths, the refusal of operations of later versions, the strict JSON body, validation
 * against the version's document of the request (and, by wrapping `res.json`, of the response), the version's
 * operation handlers, and the central error handler. The probes (`/health`, `/ready`) skip the version,
 * authentication and rate limit, go through the latest version's stages, and are logged at debug level only.
 */
export function createApp({
  store,
  logger,
  documents = loadVersionDocuments(),
  limiter,
  readiness = new Readiness(store),
  metrics,
  keyCache,
  usage,
  changeFeed,
  consoleDirectory,
  trustProxy,
  clock = systemClock,
}: AppDependencies): Express {
  const app = configuredExpress(trustProxy);
  const latest = documents[LATEST_API_VERSION];
  const probes = probePaths(latest);
  const api = express.Router({ strict: true, caseSensitive: true });
  if (metrics) {
    api.use(recordRequests(metrics, latest));
  }
  api.use(assignRequestId);
  api.use(requestLog(logger, probes));
  api.use(checkRequestFraming);
  // The reference page and the spec itself, outside the contract: no version header, no admin key.
  api.use(apiReference(documents));
  // The admin console's static files, also outside the contract: the page calls the API with the key it holds.
  api.use(adminConsole(consoleDirectory));
  api.use(exceptProbes(probes, requireApiVersion(API_VERSIONS)));
  api.use(exceptProbes(probes, authenticate(store, limiter, keyCache)));
  if (limiter?.limitsRequests) {
    api.use(exceptProbes(probes, limitRequests(limiter, latest)));
  }
  const services = servicesOn(store, { clock, keysBySecret: keyCache ?? store, usage, changeFeed });
  const handlers = versionHandlers(services, readiness);
  const stagesOf = <V extends ApiVersion>(version: V): OperationStage[] => [
    strictQueryParameters(documents[version]),
    rejectTrailingSlash,
    refuseLaterOperations(version, documents[version], latest),
    jsonBody(),
    oneAtATime(documents[version]),
    ...validateWithSpec(documents[version]),
    ...(limiter?.limitsRequests ? [limitRequestWeights(limiter)] : []),
    endWarmUpRequests,
    requireDocumentedBody,
    routesFromSpec(documents[version], handlers[version], latest),
    answerNoRoute,
    handleErrors(logger),
  ];
  const stages = Object.fromEntries(API_VERSIONS.map((version) => [version, stagesOf(version)])) as Record<
    ApiVersion,
    OperationStage[]
  >;
  const routers = Object.fromEntries(
    API_VERSIONS.map((version) => [
      version,
      express.Router({ strict: true, caseSensitive: true }).use(stages[version]),
    ]),
  ) as Record<ApiVersion, express.Router>;
  api.use((req, res, next) => routers[apiVersionOf(res) ?? LATEST_API_VERSION](req, res, next));
  // The errors of the stages before the version's (version, authentication, rate limit) skip its router.
  api.use(handleErrors(logger));

  // When the response validator refuses a body that the error handler sends, it passes its error to the `next` it
  // captured earlier, which by then leads past every handler of `api`. That error lands in `lastResort` instead
  // of Express's HTML error page. (`api` is a router rather than a mounted app: a mounted app swaps the prototypes
  // of every request and response twice.)
  app.use(api);
  app.use(lastResort(logger));
  warmUps.set(app, async (signal) => {
    const report: WarmUpReport = [];
    for (const version of API_VERSIONS) {
      const stagesOfVersion = stages[version];
      report.push(
        ...(await warmUpOperations(
          configuredExpress(),
          stagesOfVersion,
          lastResort(logger),
          documents[version],
          version,
          signal,
        )),
      );
    }
    return report;
  });
  return app;
}

/** One stage of the operations' part of the pipeline: what follows authentication. */
type OperationStage = RequestHandler | ErrorRequestHandler;

/** An Express app with the settings every app of the API shares, believing `trustProxy` for `req.ip`. */
function configuredExpress(trustProxy: TrustProxy = 0): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', typeof trustProxy === 'number' ? trustProxy : [...trustProxy]);
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

const warmUps = new WeakMap<Express, (signal?: AbortSignal) => Promise<WarmUpReport>>();

/**
 * Sends one request per operation of each version's document through that version's operation stages (see
 * `warmUpOperations`), so that each validator has compiled every operation before the first caller arrives.
 * Resolves with what each answered; once `signal` aborts, with what was sent until then.
 */
export function warmUp(app: Express, signal?: AbortSignal): Promise<WarmUpReport> {
  const run = warmUps.get(app);
  if (!run) {
    throw new TypeError('warmUp() takes an app made by createApp()');
  }
  return run(signal);
}
