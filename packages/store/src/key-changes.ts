import type { KeyChange, KeyChangeEvent, KeyChangeListener } from './types.js';

/** The PostgreSQL channel on which every process announces its changes to keys. */
export const KEY_CHANGES_CHANNEL = 'apikeys_key_changes';

/**
 * A change as a notification's payload: `api_key:apikey_...:org_...:updated:<origin>` (IDs hold no `:`), where
 * `origin` names the store that made it, whose own watchers have heard it already.
 */
export function keyChangePayload(change: KeyChange, origin: string): string {
  return `${change.kind}:${change.id}:${change.organizationId ?? ''}:${change.change}:${origin}`;
}

/** A notification read back: the change, and the store that announced it (undefined for an earlier release's). */
export interface AnnouncedKeyChange {
  change: KeyChange;
  origin: string | undefined;
}

const KINDS = new Set<KeyChange['kind']>(['api_key', 'admin_key', 'verifier_key']);
const CHANGES = new Set<KeyChange['change']>(['updated', 'rotated']);

/**
 * The change a notification's payload names, or undefined for a payload of no form this service sends. A payload of
 * an earlier release (`api_key:apikey_...`) names no organization, and reads as an update.
 */
export function parseKeyChangePayload(payload: string): AnnouncedKeyChange | undefined {
  const [kind, id, organizationId, change = 'updated', origin, ...rest] = payload.split(':');
  if (
    rest.length > 0 ||
    !KINDS.has(kind as KeyChange['kind']) ||
    !id ||
    !CHANGES.has(change as KeyChange['change']) ||
    organizationId === '' ||
    origin === ''
  ) {
    return undefined;
  }
  return {
    change: { kind: kind as KeyChange['kind'], id, organizationId, change: change as KeyChange['change'] },
    origin,
  };
}

/** The listeners of one store's changes, called in this process as soon as each change has committed. */
export class KeyChangeHub {
  readonly #listeners = new Set<KeyChangeListener>();

  subscribe(listener: KeyChangeListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  publish(event: KeyChangeEvent): void {
    for (const listener of this.#listeners) {
      listener(event);
    }
  }
}
