import { type Creator, nowMicros } from '@apikeys/store';
import type { Caller } from '../authenticate.js';
import type { SerializeContext } from '../serializers/context.js';

/** What a request's serializers need, read once per request: the caller's default workspace, and now. */
export async function serializeContext(caller: Caller): Promise<SerializeContext> {
  return { defaultWorkspaceId: await caller.defaultWorkspaceId(), now: nowMicros() };
}

/** The creator recorded for a key an admin key creates: the admin key, as a service account. */
export function creatorOf(caller: Caller): Creator {
  if (caller.kind !== 'admin_key') {
    throw new Error('only an admin key creates keys');
  }
  return { type: 'service_account', id: caller.adminKeyId };
}

/**
 * The store's workspace filter for the `workspace_id` a list asks for: the default workspace's keys are stored with
 * a null workspace, so its real ID asks for null.
 */
export async function workspaceFilter(
  caller: Caller,
  workspaceId: string | undefined,
): Promise<string | null | undefined> {
  return workspaceId !== undefined && workspaceId === (await caller.defaultWorkspaceId()) ? null : workspaceId;
}
