import type { KeyChange, KeyChangeEvent, KeyChangeListener } from './types.js';

/** The PostgreSQL channel on which every process announces its changes to keys. */
export const KEY_CHANGES_CHANNEL = 'apikeys_key_changes';

/** A change as a notification's payload: `api_key:apikey_...`. */
export function keyChangePayload(change: KeyChange): string {
  return `${change.kind}:${change.id}`;
}

const KINDS = new Set<KeyChange['kind']>(['api_key', 'admin_key', 'verifier_key']);

/** The change a notification's payload names, or undefined for a payload of no form this service sends. */
export function parseKeyChangePayload(payload: string): KeyChange | undefined {
  const separator = payload.indexOf(':');
  const kind = payload.slice(0, separator) as KeyChange['kind'];
  const id = payload.slice(separator + 1);
  return separator > 0 && KINDS.has(kind) && id.length > 0 ? { kind, id } : undefined;
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
