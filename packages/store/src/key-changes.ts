import type { KeyChange, KeyChangeEvent, KeyChangeListener } from './types.js';

/** The PostgreSQL channel on which every process announces its changes to keys. */
export const KEY_CHANGES_CHANNEL = 'apikeys_key_changes';

/** A change as a notification's payload: `api_key:apikey_...:org_...:updated` (IDs hold no `:`). */
export function keyChangePayload(change: KeyChange): string {
  return `${change.kind}:${change.id}:${change.organizationId ?? ''}:${change.change}`;
}

const KINDS = new Set<KeyChange['kind']>(['api_key', 'admin_key', 'verifier_key']);
const CHANGES = new Set<KeyChange['change']>(['updated', 'rotated']);

/**
 * The change a notification's payload names, or undefined for a payload of no form this service sends. A payload of
 * an earlier release (`api_key:apikey_...`) names no organization, and reads as an update.
 */
export function parseKeyChangePayload(payload: string): KeyChange | undefined {
  const [kind, id, organizationId, change = 'updated', ...rest] = payload.split(':');
  if (
    rest.length > 0 ||
    !KINDS.has(kind as KeyChange['kind']) ||
    !id ||
    !CHANGES.has(change as KeyChange['change']) ||
    organizationId === ''
  ) {
    return undefined;
  }
  return {
    kind: kind as KeyChange['kind'],
    id,
    organizationId,
    change: change as KeyChange['change'],
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
