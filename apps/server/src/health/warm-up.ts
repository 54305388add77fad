import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiVersion } from '@apikeys/api-types';
import type { OpenApiDocument } from '@apikeys/spec';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Caller } from '../http/authenticate.js';
import { HttpError } from '../http/errors/http-error.js';
import { assignRequestId } from '../http/request-id.js';
import { openApiMetadataOf } from '../spec/openapi-metadata.js';
import { specOperations } from '../spec/spec-operations.js';

/** What one warm-up request met: the operation it was for, the one the validator matched, and the status. */
export interface WarmUpResult {
  version: ApiVersion;
  operationId: string;
  /** The operationId express-openapi-validator found for the request; undefined if it never reached the validator. */
  validatedAs: string | undefined;
  status: number;
  /** The error message of an error answer. */
  error?: string;
}
export type WarmUpReport = WarmUpResult[];

/** The caller of the warm-up: an organization that does not exist, so that its requests read and change nothing. */
export const WARM_UP_CALLER: Caller = {
  organizationId: 'org_warmup',
  defaultWorkspaceId: async () => 'wrkspc_warmup',
  kind: 'admin_key',
  adminKeyId: 'adminkey_warmup',
};
/** What fills every path parameter: no key has this ID. */
const PATH_PLACEHOLDER = 'warmup';
const BODY_METHODS = new Set(['post', 'put', 'patch']);

/**
 * Ends a warm-up request that sends a body, once the validator has passed it and before its operation's handler,
 * which might change something: with a 400 whose validation builds the operation's response validators (which
 * express-openapi-validator builds on an operation's first validated answer, not before). Every other request goes on.
 */
export function endWarmUpRequests(req: Request, res: Response, next: NextFunction): void {
  if (res.locals.caller !== WARM_UP_CALLER || !BODY_METHODS.has(req.method.toLowerCase())) {
    next();
    return;
  }
  next(HttpError.of('invalid_request_error', 'a warm-up request; it reaches no operation'));
}

async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * express-openapi-validator loads the spec on its first request and compiles each operation's request and response
 * validators on that operation's first request: about 100 ms and 200 ms on this machine, paid by the first caller
 * of each operation. This sends one request per operation of the spec through the API's own operation stages (the
 * same middleware instances, so the same validator and its caches), on a private app listening on a free loopback
 * port for the duration. The requests carry a caller of an organization that does not exist: the API's
 * authentication is not part of the stages, and no request reads or changes any organization's data. Once `signal`
 * aborts, no further request is sent.
 */
export async function warmUpOperations(
  app: Express,
  stages: (RequestHandler | ErrorRequestHandler)[],
  lastResort: ErrorRequestHandler,
  document: OpenApiDocument,
  version: ApiVersion,
  signal?: AbortSignal,
): Promise<WarmUpReport> {
  const validatedAs = new Map<string, string | undefined>();
  /** The responses closed, by request ID, and who waits for a stream's to close. */
  const closed = new Set<string>();
  const closing = new Map<string, () => void>();
  app.use(assignRequestId);
  app.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.caller = WARM_UP_CALLER;
    const requestId = String(res.locals.requestId);
    const record = () => validatedAs.set(requestId, openApiMetadataOf(req)?.schema?.operationId);
    res.once('finish', record);
    // A stream never finishes: it closes once the warm-up leaves it.
    res.once('close', () => {
      record();
      closed.add(requestId);
      closing.get(requestId)?.();
    });
    next();
  });
  app.use(stages);
  app.use(lastResort);
  const server = createServer(app);
  const port = await listenOnLoopback(server);
  try {
    const report: WarmUpReport = [];
    for (const { method, path, operationId, requestExample } of specOperations(document)) {
      if (signal?.aborted) {
        break;
      }
      const hasBody = BODY_METHODS.has(method);
      // The spec's own example of the body: valid, so it passes the validator (then `endWarmUpRequests` ends it).
      const body = JSON.stringify(requestExample ?? {});
      const response = await fetch(`http://127.0.0.1:${port}${path.replace(/\{[^}]+\}/g, PATH_PLACEHOLDER)}`, {
        method: method.toUpperCase(),
        headers: { 'vendor-version': version, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
        ...(hasBody ? { body } : {}),
      });
      const requestId = response.headers.get('request-id') ?? '';
      let error: string | undefined;
      // A stream would never end: its headers have compiled what there is to compile.
      if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
        const streamClosed = new Promise<void>((resolve) =>
          closed.has(requestId) ? resolve() : closing.set(requestId, resolve),
        );
        await response.body?.cancel();
        await streamClosed;
        closing.delete(requestId);
      } else {
        const answer = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
        error = response.status >= 400 ? answer?.error?.message : undefined;
      }
      const validated = validatedAs.get(requestId);
      report.push({ version, operationId, validatedAs: validated, status: response.status, ...(error && { error }) });
    }
    return report;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
