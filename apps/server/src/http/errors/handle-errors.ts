import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError } from '../../domain/errors.js';
import { wasAnsweredEarly } from '../parser-level-answers.js';
import { requestIdOf } from '../request-id.js';
import { sendJson } from '../send-json.js';
import { fromBodyParserError, isBodyParserError } from './body-parser-errors.js';
import { fromDatabaseUnavailable, isDatabaseUnavailable, isWriteMethod } from './database-errors.js';
import { HttpError, toErrorResponse } from './http-error.js';
import { fromValidatorError, isValidatorError } from './validator-errors.js';

/** Maps anything thrown to an HttpError. Unknown errors become the generic 500, whose details stay in the log. */
export function toHttpError(error: unknown, req: Request): HttpError {
  if (error instanceof HttpError) {
    return error;
  }
  if (error instanceof AppError) {
    return HttpError.fromAppError(error);
  }
  if (isDatabaseUnavailable(error)) {
    return fromDatabaseUnavailable(error, req.method);
  }
  if (isValidatorError(error)) {
    return fromValidatorError(error, req);
  }
  if (isBodyParserError(error) && error.status < 500) {
    return fromBodyParserError(error);
  }
  return HttpError.internal(error);
}

/** The central error handler: every error response goes out here, in the spec's error shape. */
export function handleErrors(logger: Logger) {
  // Express recognises error handlers by their four parameters.
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    // A request whose body the HTTP parser refused was answered then; what its pipeline raises after is moot.
    if (wasAnsweredEarly(res)) {
      return;
    }
    const httpError = toHttpError(error, req);
    const requestId = requestIdOf(res);
    if (isDatabaseUnavailable(httpError.cause)) {
      // Expected in operation (the database restarts, stalls, fills up): a warning that says what and for whom.
      const { reason, message, writeOutcome } = httpError.cause;
      const outcome = isWriteMethod(req.method) ? { write_outcome: writeOutcome } : {};
      logger.warn({ request_id: requestId, reason, detail: message, ...outcome }, 'database unavailable');
    } else if (httpError.status >= 500 && !httpError.logged) {
      logger.error({ request_id: requestId, err: httpError.cause ?? httpError }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(httpError.headers);
    sendJson(res, httpError.status, toErrorResponse(httpError, requestId));
  };
}

/**
 * The handler after all others: it receives errors raised while an error response was being sent (the response
 * validator refusing a status the operation does not document, a bug of ours) and answers with the generic 500,
 * written without `res.json` so it cannot fail the same way.
 */
export function lastResort(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    if (wasAnsweredEarly(res)) {
      return;
    }
    const requestId = requestIdOf(res);
    logger.error({ request_id: requestId, err: error }, 'error response failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res
      .status(500)
      .type('application/json')
      .end(JSON.stringify(toErrorResponse(HttpError.internal(), requestId)));
  };
}
