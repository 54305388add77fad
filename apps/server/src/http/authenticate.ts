import { hashSecret, type Store } from '@apikeys/store';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './errors/http-error.js';

/** Who is calling: the admin key and the organization every operation of this request acts on. */
export interface Caller {
  organizationId: string;
  adminKeyId: string;
}

/**
 * Authenticates the admin key in `x-api-key`. Keys are looked up by their SHA-256 hash, never by the secret,
 * and the stored hash is compared in constant time. A regular API key is recognised and refused with 403.
 */
export function authenticate(store: Store) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const secret = req.headers['x-api-key'];
    if (typeof secret !== 'string' || secret === '') {
      next(HttpError.of('authentication_error', 'x-api-key header is required'));
      return;
    }
    try {
      const credential = await store.findCredential(hashSecret(secret));
      if (credential.kind === 'api_key') {
        next(HttpError.of('permission_error', 'this API requires an admin key; x-api-key holds a regular API key'));
        return;
      }
      if (credential.kind === 'unknown' || credential.adminKey.status !== 'active') {
        next(HttpError.of('authentication_error', 'invalid x-api-key'));
        return;
      }
      const caller: Caller = {
        organizationId: credential.adminKey.organizationId,
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
