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

/** How a store's engine tells of the other processes' changes (`DialectAdapter.watchKeyChanges`). */
export type WatchOtherProcesses = (listener: KeyChangeListener) => Promise<() => Promise<void>>;

/**
 * The listeners of one store's changes: its own, published as soon as each has committed, and the other processes',
 * heard through one watch of the engine shared by every listener while any listens. Every listener hears every event
 * in the order the listeners came: a server's key cache, which listens first, has forgotten a changed key before its
 * change feed tells a gateway to ask about it again. (With a watch each, two connections heard the same change at
 * different moments, and a gateway could ask again, and remember the answer, before the cache had forgotten.)
 */
export class KeyChangeHub {
  readonly #listeners = new Set<KeyChangeListener>();
  #watching: Promise<() => Promise<void>> | undefined;
  /** Whether the engine's watch is lost now (from `lost` to `reset`): a listener that comes then hears `lost`. */
  #lost = false;

  publish(event: KeyChangeEvent): void {
    if (event.type === 'lost') {
      this.#lost = true;
    } else if (event.type === 'reset') {
      this.#lost = false;
    }
    // One listener's failure must not keep the event from the others (with a connection each, it did not).
    let failure: { error: unknown } | undefined;
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) {
      throw failure.error;
    }
  }

  /**
   * Adds `listener`, and watches the other processes through `watch` unless a listener does already. Resolves once
   * listening, with the function that stops; rejects, adding nothing, when the engine cannot watch.
   */
  async listen(listener: KeyChangeListener, watch: WatchOtherProcesses): Promise<() => Promise<void>> {
    this.#listeners.add(listener);
    try {
      this.#watching ??= watch((event) => this.publish(event)).catch((error: unknown) => {
        this.#watching = undefined;
        throw error;
      });
      await this.#watching;
    } catch (error) {
      this.#listeners.delete(listener);
      throw error;
    }
    if (this.#lost) {
      listener({ type: 'lost' });
    }
    let listening = true;
    return async () => {
      if (!listening) {
        return;
      }
      listening = false;
      this.#listeners.delete(listener);
      const watching = this.#watching;
      if (this.#listeners.size === 0 && watching !== undefined) {
        this.#watching = undefined;
        this.#lost = false;
        await (await watching)();
      }
    };
  }
}
