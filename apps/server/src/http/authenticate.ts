import { hashSecret, type Store, secretForm } from '@apikeys/store';
import type { NextFunction, Request, Response } from 'express';
import { DefaultWorkspaces } from '../domain/default-workspaces.js';
import { describeWait, type RequestLimiter } from '../rate-limits/request-limiter.js';
import { MISSING_CREDENTIAL_MESSAGES, presentedCredential } from './credentials.js';
import { HttpError } from './errors/http-error.js';

/** Who is calling: the admin key and the organization every operation of this request acts on. */
export interface Caller {
  organizationId: string;
  /**
   * The real ID of the organization's default workspace (whose keys are stored with a null workspace), read when a
   * request first needs it and then kept: the first API version never shows it.
   */
  defaultWorkspaceId(): Promise<string>;
  adminKeyId: string;
}

/**
 * The 401 of a request without a valid admin key, or a 429 once its address has failed too often: the limiter
 * counts failures only, so a valid admin key is never refused because of someone else's guesses.
 */
async function refuse(req: Request, limiter: RequestLimiter | undefined, message: string): Promise<HttpError> {
  const wait = await limiter?.consumeFailedAuthentication(req.ip ?? req.socket.remoteAddress ?? 'unknown');
  if (wait === undefined) {
    return HttpError.of('authentication_error', message);
  }
  return HttpError.of('rate_limit_error', `too many failed authentications; retry after ${describeWait(wait)}`, {
    headers: { 'retry-after': String(wait) },
  });
}

/**
 * Authenticates the admin key in `x-api-key` or `Authorization: Bearer` (see `presentedCredential`). Keys are
 * looked up by their SHA-256 hash, never by the secret, and the stored hash is compared in constant time. A regular
 * API key is recognised and refused with 403.
 */
export function authenticate(store: Store, limiter?: RequestLimiter) {
  const defaultWorkspaces = new DefaultWorkspaces(store);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const presented = presentedCredential(req.headers);
    try {
      if (presented.kind !== 'key') {
        next(await refuse(req, limiter, MISSING_CREDENTIAL_MESSAGES[presented.kind]));
        return;
      }
      // A secret of no form this service issues, or whose checksum does not hold, is refused without a lookup.
      const form = secretForm(presented.secret);
      if (form === 'mistyped' || form === 'foreign') {
        next(await refuse(req, limiter, `invalid ${presented.header}`));
        return;
      }
      const credential = await store.findCredential(hashSecret(presented.secret));
      if (credential.kind === 'api_key') {
        const message = `this API requires an admin key; ${presented.header} holds a regular API key`;
        next(HttpError.of('permission_error', message));
        return;
      }
      if (credential.kind === 'unknown' || credential.adminKey.status !== 'active') {
        next(await refuse(req, limiter, `invalid ${presented.header}`));
        return;
      }
      const caller: Caller = {
        organizationId: credential.adminKey.organizationId,
        defaultWorkspaceId: () => defaultWorkspaces.of(credential.adminKey.organizationId),
        adminKeyId: credential.adminKey.id,
      };
      res.locals.caller = caller;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The authenticated caller of this request. */
export function callerOf(res: Response): Caller {
  return res.locals.caller as Caller;
}
