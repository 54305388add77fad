import type { OperationId, operations, QueryParameterDefaults } from '@apikeys/api-types';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type Caller, callerOf } from './authenticate.js';
import { sendJson } from './send-json.js';

type Operation<K extends OperationId> = operations[K];
type ParametersOf<K extends OperationId, In extends 'query' | 'path'> = NonNullable<Operation<K>['parameters'][In]>;

/**
 * The query as the validator hands it over: it fills in every parameter the spec gives a default, so those are
 * always present (`QueryParameterDefaults` is generated from the spec). No handler applies a default of its own.
 */
type ValidatedQuery<K extends OperationId> = K extends keyof QueryParameterDefaults
  ? ParametersOf<K, 'query'> & Required<Pick<ParametersOf<K, 'query'>, QueryParameterDefaults[K]>>
  : ParametersOf<K, 'query'>;

/** The JSON body of an operation's request, from the generated types. */
export type RequestBodyOf<K extends OperationId> =
  Operation<K> extends {
    requestBody: { content: { 'application/json': infer Body } };
  }
    ? Body
    : undefined;

/** The JSON body of an operation's 200 response, from the generated types. */
export type SuccessBodyOf<K extends OperationId> = Operation<K>['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** The JSON body of an operation's response of status `S`, from the generated types. */
type ResponseBodyOf<K extends OperationId, S extends number> = Operation<K>['responses'] extends {
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
 * What a handler receives: the caller and the request's inputs, already validated and coerced by the spec. The
 * probes (`security: []`) take no credential: their handlers must not read `caller`.
 */
export interface OperationInput<K extends OperationId> {
  caller: Caller;
  query: ValidatedQuery<K>;
  path: ParametersOf<K, 'path'>;
  body: RequestBodyOf<K>;
}

/**
 * A handler of one operation: typed inputs in, the typed 200 body out, or another documented status with its body.
 * It never sees `req` or `res`.
 */
export type OperationHandler<K extends OperationId> = (
  input: OperationInput<K>,
) => Promise<
  SuccessBodyOf<K> | StatusResponse<ResponseBodyOf<K, Exclude<keyof Operation<K>['responses'], 200> & number>>
>;

/** One handler for every operation in the spec: a missing one is a compile error. */
export type OperationHandlers = { [K in OperationId]: OperationHandler<K> };

/**
 * Adapts an operation handler to Express. It runs after express-openapi-validator, so `req.query`, `req.params`
 * and `req.body` hold values the spec accepted, with defaults applied and types coerced.
 */
export function toExpressHandler<K extends OperationId>(handler: OperationHandler<K>): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const result = await handler({
        caller: callerOf(res),
        query: req.query as ValidatedQuery<K>,
        path: req.params as ParametersOf<K, 'path'>,
        body: req.body as RequestBodyOf<K>,
      });
      if (result instanceof StatusResponse) {
        sendJson(res, result.status, result.body);
      } else {
        sendJson(res, 200, result);
      }
    } catch (error) {
      next(error);
    }
  };
}
