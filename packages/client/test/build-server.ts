import { buildServerBundle } from '@apikeys/server/testing';

/** Vitest's global setup: the server processes the tests start (require-api-key-outage) run the production bundle. */
export function setup(): void {
  buildServerBundle();
}
