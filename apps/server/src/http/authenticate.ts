import { hashSecret, type Store, secretForm, secretKind } from '@apikeys/store';
import type { NextFunction, Request, Response } from 'express';
import { type DefaultWorkspaceId, DefaultWorkspaces } from '../domain/default-workspace.js';
import { describeWait, type RequestLimiter } from '../rate-limits/request-limiter.js';
import type { CredentialsByHash } from '../verification/credentials-by-hash.js';
import { MISSING_CREDENTIAL_MESSAGES, presentedCredential } from './credentials.js';
import { HttpError } from './errors/http-error.js';

/** What every caller has: the organization every operation of this request acts on. */
interface CallerOrganization {
  organizationId: string;
  /**
   * The real ID of the organization's default workspace (whose keys are stored with a null workspace), read when a
   * request first needs it and then kept: the first API version never shows it.
   */
  defaultWorkspaceId: DefaultWorkspaceId;
}

/** Who is calling with an admin key, which may call every operation. */
export interface AdminCaller extends CallerOrganization {
  kind: 'admin_key';
  adminKeyId: string;
}

/** Who is calling with a verifier key, which may call only the operations whose `security` lists verifier keys. */
export interface VerifierCaller extends CallerOrganization {
  kind: 'verifier_key';
  verifierKeyId: string;
}

/** Who is calling. */
export type Caller = AdminCaller | VerifierCaller;

/** The ID of the caller's key: what its rate limit is counted by. */
export const callerKeyId = (caller: Caller): string =>
  caller.kind === 'admin_key' ? caller.adminKeyId : caller.verifierKeyId;

/**
 * The 401 of a request without a valid admin key, or a 429 once its client address (`req.ip`: behind a trusted
 * proxy, the address it forwarded) has failed too often: the limiter counts failures only, so a valid admin key is
 * never refused because of someone else's guesses.
 */
async function refuse(req: Request, limiter: RequestLimiter | undefined, message: string): Promise<HttpError> {
  const wait = await limiter?.consumeFailedAuthentication(req.ip ?? 'unknown');
  if (wait === undefined) {
    return HttpError.of('authentication_error', message);
  }
  return HttpError.of('rate_limit_error', `too many failed authentications; retry after ${describeWait(wait)}`, {
    headers: { 'retry-after': String(wait) },
  });
}

/**
 * Authenticates the admin key or verifier key in `x-api-key` or `Authorization: Bearer` (see
 * `presentedCredential`). Keys are looked up by their SHA-256 hash, never by the secret, in the table their prefix
 * names (through `credentials`, a cache that forgets a key as soon as it changes, when there is one), and the stored
 * hash is compared in constant time. A regular API key is recognised and refused with 403.
 * Which operations a verifier key may call is decided by the routes (`routesFromSpec`).
 */
export function authenticate(store: Store, limiter?: RequestLimiter, credentials: CredentialsByHash = store) {
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
      const credential = await credentials.findCredential(hashSecret(presented.secret), secretKind(presented.secret));
      if (credential.kind === 'api_key') {
        const message = `this API requires an admin key; ${presented.header} holds a regular API key`;
        next(HttpError.of('permission_error', message));
        return;
      }
      const key =
        credential.kind === 'admin_key'
          ? credential.adminKey
          : credential.kind === 'verifier_key'
            ? credential.verifierKey
            : undefined;
      if (key?.status !== 'active') {
        next(await refuse(req, limiter, `invalid ${presented.header}`));
        return;
      }
      const organization = {
        organizationId: key.organizationId,
        defaultWorkspaceId: () => defaultWorkspaces.of(key.organizationId),
      };
      const caller: Caller =
        credential.kind === 'admin_key'
          ? { ...organization, kind: 'admin_key', adminKeyId: key.id }
          : { ...organization, kind: 'verifier_key', verifierKeyId: key.id };
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
