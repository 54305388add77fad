import { buildServerBundle } from '../testing/server-bundle.js';

/** Vitest's global setup: the server processes the tests start run the production bundle, built here. */
export function setup(): void {
  buildServerBundle();
}
