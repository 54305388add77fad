import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The server package's folder. */
export const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The server as built for production (`pnpm build`, what `npm run quickstart` starts), relative to `SERVER_DIR`. */
export const SERVER_BUNDLE = 'dist/main.js';

/**
 * Builds the server's production bundle from its sources, as its `build` script does: the global setup of every
 * suite that starts server processes calls it, so that they run what production runs (and start faster than the
 * sources through tsx), and a bundle that cannot be built fails the tests.
 */
export function buildServerBundle(): void {
  execFileSync(process.execPath, ['build.mjs', 'src/main.ts'], { cwd: SERVER_DIR, stdio: 'inherit' });
}
