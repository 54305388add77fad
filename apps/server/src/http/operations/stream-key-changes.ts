import type { ErrorType } from '@apikeys/api-types';
import type { CredentialRef } from '@apikeys/store';
import type { ChangeFeedSettings, SubscriptionRefusal } from '../../change-feed/key-change-feed.js';
import type { Caller } from '../authenticate.js';
import { HttpError } from '../errors/http-error.js';
import { EventStream } from '../event-stream.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import type { Services } from './services.js';

/** The key a caller authenticated with: a change to it ends its subscriptions. */
function credentialOf(caller: Caller): CredentialRef {
  return caller.kind === 'admin_key'
    ? { kind: 'admin_key', id: caller.adminKeyId }
    : { kind: 'verifier_key', id: caller.verifierKeyId };
}

const REFUSALS: Record<
  SubscriptionRefusal,
  { type: ErrorType; message: (settings: ChangeFeedSettings) => string; retryAfterSeconds: number }
> = {
  limit: {
    type: 'service_unavailable_error',
    message: () => 'this server holds as many change subscriptions as its operator allows; subscribe again later',
    retryAfterSeconds: 5,
  },
  credential_quota: {
    type: 'rate_limit_error',
    message: ({ maxPerCredential }) =>
      `this key holds as many change subscriptions as one key may on this server (${maxPerCredential}); ` +
      'subscribe again once one of them has ended',
    retryAfterSeconds: 10,
  },
  organization_quota: {
    type: 'rate_limit_error',
    message: ({ maxPerOrganization }) =>
      `the organization's keys hold as many change subscriptions as one organization may on this server ` +
      `(${maxPerOrganization}); subscribe again once one of them has ended`,
    retryAfterSeconds: 10,
  },
  shutdown: {
    type: 'service_unavailable_error',
    message: () => 'the server is shutting down; subscribe again',
    retryAfterSeconds: 1,
  },
  notifications_lost: {
    type: 'service_unavailable_error',
    message: () => "the server lost the database's notifications of changes; subscribe again later",
    retryAfterSeconds: 1,
  },
};

/** `streamKeyChanges` (from version `v2026_10_21`): the caller's organization's key changes, as they happen. */
export const streamKeyChanges = {
  v2026_10_21:
    ({ changeFeed }: Services): OperationHandler<V2026_10_21, 'streamKeyChanges'> =>
    async ({ caller }) => {
      const owner = { organizationId: caller.organizationId, credential: credentialOf(caller) };
      const refusal = changeFeed.refusal(owner);
      if (refusal) {
        const { type, message, retryAfterSeconds } = REFUSALS[refusal];
        // The feed has counted the refusal and warns of refusals at most once per interval: no log line per request.
        throw HttpError.of(type, message(changeFeed.settings), {
          headers: { 'retry-after': String(retryAfterSeconds) },
          logged: true,
        });
      }
      return new EventStream((sink) => {
        const subscription = changeFeed.subscribe(owner, sink);
        return { onClientGone: () => subscription.cancel() };
      });
    },
};
