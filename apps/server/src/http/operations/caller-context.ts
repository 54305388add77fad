import type { Creator } from '@apikeys/store';
import type { Clock } from '../../clock.js';
import type { Caller } from '../authenticate.js';
import type { SerializeContext } from '../serializers/context.js';

/** What a request's serializers need, read once per request: the caller's default workspace, and now. */
export async function serializeContext(caller: Caller, clock: Clock): Promise<SerializeContext> {
  return { defaultWorkspaceId: await caller.defaultWorkspaceId(), now: clock() };
}

/** The creator recorded for a key an admin key creates: the admin key, as a service account. */
export function creatorOf(caller: Caller): Creator {
  if (caller.kind !== 'admin_key') {
    throw new Error('only an admin key creates keys');
  }
  return { type: 'service_account', id: caller.adminKeyId };
}
