import type { ApiVersion, OperationIdOf, OperationsOf, QueryParameterDefaults } from '@apikeys/api-types';
import type { ChangeContext } from '@apikeys/store';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type Caller, callerOf } from './authenticate.js';
import { EventStream, sendEventStream } from './event-stream.js';
import { requestIdOf } from './request-id.js';
import { sendJson } from './send-json.js';

type Operation<V extends ApiVersion, K extends OperationIdOf<V>> = OperationsOf<V>[K];
type ParametersOf<V extends ApiVersion, K extends OperationIdOf<V>, In extends 'query' | 'path'> =
  Operation<V, K> extends { parameters: { [key in In]?: infer Parameters } } ? NonNullable<Parameters> : never;
type ResponsesOf<V extends ApiVersion, K extends OperationIdOf<V>> =
  Operation<V, K> extends { responses: infer Responses } ? Responses : never;

/**
 * The query as the validator hands it over: it fills in every parameter the spec gives a default, so those are
 * always present (`QueryParameterDefaults` is generated from the spec). No handler applies a default of its own.
 */
type ValidatedQuery<V extends ApiVersion, K extends OperationIdOf<V>> = K extends keyof QueryParameterDefaults
  ? ParametersOf<V, K, 'query'> &
      Required<Pick<ParametersOf<V, K, 'query'>, QueryParameterDefaults[K] & keyof ParametersOf<V, K, 'query'>>>
  : ParametersOf<V, K, 'query'>;

/** The JSON body of an operation's request, from the generated types. */
export type RequestBodyOf<V extends ApiVersion, K extends OperationIdOf<V>> =
  Operation<V, K> extends {
    requestBody: { content: { 'application/json': infer Body } };
  }
    ? Body
    : Operation<V, K> extends { requestBody?: { content: { 'application/json': infer Body } } }
      ? Body | undefined
      : undefined;

/**
 * What a handler answers for an operation's 200 response, from the generated types: its JSON body, or an
 * `EventStream` for a response of `text/event-stream`.
 */
export type SuccessBodyOf<V extends ApiVersion, K extends OperationIdOf<V>> =
  ResponsesOf<V, K> extends {
    200: { content: { 'application/json': infer Body } };
  }
    ? Body
    : ResponsesOf<V, K> extends { 200: { content: { 'text/event-stream': unknown } } }
      ? EventStream
      : never;

/** The JSON body of an operation's response of status `S`, from the generated types. */
type ResponseBodyOf<V extends ApiVersion, K extends OperationIdOf<V>, S extends number> =
  ResponsesOf<V, K> extends {
    [status in S]: { content: { 'application/json': infer Body } };
  }
    ? Body
    : never;

/** A documented response other than 200, that a handler answers instead of its 200 body. */
export class StatusResponse<Body> {
  constructor(
    readonly status: number,
    readonly body: Body,
  ) {}
}

/** Answers with `status` and `body` rather than 200 (a 503 readiness report, say). */
export const withStatus = <S extends number, Body>(status: S, body: Body) => new StatusResponse(status, body);

/**
 * What a handler receives: the caller, who the changes it makes are recorded as made by, and the request's inputs,
 * already validated and coerced by the spec. The probes (`security: []`) take no credential: their handlers must not
 * read `caller` or `changes`.
 */
export interface OperationInput<V extends ApiVersion, K extends OperationIdOf<V>> {
  caller: Caller;
  changes: ChangeContext;
  query: ValidatedQuery<V, K>;
  path: ParametersOf<V, K, 'path'>;
  body: RequestBodyOf<V, K>;
}

/**
 * A handler of one operation: typed inputs in, the typed 200 body out, or another documented status with its body.
 * It never sees `req` or `res`.
 */
export type OperationHandler<V extends ApiVersion, K extends OperationIdOf<V>> = (
  input: OperationInput<V, K>,
) => Promise<
  SuccessBodyOf<V, K> | StatusResponse<ResponseBodyOf<V, K, Exclude<keyof ResponsesOf<V, K>, 200> & number>>
>;

/** One handler for every operation of a version's document: a missing one is a compile error. */
export type OperationHandlers<V extends ApiVersion> = { [K in OperationIdOf<V>]: OperationHandler<V, K> };

/**
 * The changes a request makes are the caller's admin key's, through this request and client: the client's address
 * is `req.ip`, the one its failed authentications are limited by. A verifier key reaches only operations that change
 * nothing (the routes refuse it the others), so it has no change context.
 */
function changeContext(caller: Caller, req: Request, res: Response): ChangeContext {
  if (caller.kind !== 'admin_key') {
    throw new Error('a verifier key changes nothing');
  }
  return {
    actor: { type: 'admin_key', id: caller.adminKeyId },
    requestId: requestIdOf(res),
    client: { ipAddress: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null },
  };
}

/**
 * Adapts an operation handler to Express. It runs after express-openapi-validator, so `req.query`, `req.params`
 * and `req.body` hold values the spec accepted, with defaults applied and types coerced.
 */
export function toExpressHandler<V extends ApiVersion, K extends OperationIdOf<V>>(
  handler: OperationHandler<V, K>,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const caller = callerOf(res);
      const result = await handler({
        caller,
        // Read by the handlers that change something, which only an admin key reaches.
        get changes() {
          return changeContext(caller, req, res);
        },
        query: req.query as ValidatedQuery<V, K>,
        path: req.params as ParametersOf<V, K, 'path'>,
        body: req.body as RequestBodyOf<V, K>,
      });
      if (result instanceof StatusResponse) {
        sendJson(res, result.status, result.body);
      } else if (result instanceof EventStream) {
        sendEventStream(res, result);
      } else {
        sendJson(res, 200, result);
      }
    } catch (error) {
      next(error);
    }
  };
}
