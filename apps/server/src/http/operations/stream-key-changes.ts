import type { KeyRef } from '@apikeys/store';
import type { SubscriptionRefusal } from '../../change-feed/key-change-feed.js';
import type { Caller } from '../authenticate.js';
import { HttpError } from '../errors/http-error.js';
import { EventStream } from '../event-stream.js';
import type { OperationHandler } from '../typed-handler.js';
import type { V2026_10_21 } from './api-versions.js';
import type { Services } from './services.js';

/** The key a caller authenticated with: a change to it ends its subscriptions. */
function credentialOf(caller: Caller): KeyRef {
  return caller.kind === 'admin_key'
    ? { kind: 'admin_key', id: caller.adminKeyId }
    : { kind: 'verifier_key', id: caller.verifierKeyId };
}

const REFUSALS: Record<SubscriptionRefusal, { message: string; retryAfterSeconds: number }> = {
  limit: {
    message: 'this server holds as many change subscriptions as its operator allows; subscribe again later',
    retryAfterSeconds: 5,
  },
  shutdown: { message: 'the server is shutting down; subscribe again', retryAfterSeconds: 1 },
  notifications_lost: {
    message: "the server lost the database's notifications of changes; subscribe again later",
    retryAfterSeconds: 1,
  },
};

/** `streamKeyChanges` (from version `v2026_10_21`): the caller's organization's key changes, as they happen. */
export const streamKeyChanges = {
  v2026_10_21:
    ({ changeFeed }: Services): OperationHandler<V2026_10_21, 'streamKeyChanges'> =>
    async ({ caller }) => {
      const refusal = changeFeed.refusal();
      if (refusal) {
        const { message, retryAfterSeconds } = REFUSALS[refusal];
        throw HttpError.of('service_unavailable_error', message, {
          headers: { 'retry-after': String(retryAfterSeconds) },
        });
      }
      const owner = { organizationId: caller.organizationId, credential: credentialOf(caller) };
      return new EventStream((sink) => {
        const subscription = changeFeed.subscribe(owner, sink);
        return { onClientGone: () => subscription.cancel() };
      });
    },
};
