import type { Store } from '@apikeys/store';
import type { Logger } from 'pino';

/** The command that creates the first admin key, as the README's quick start runs it. */
export const CREATE_ADMIN_KEY_COMMAND = 'pnpm -s apikeys admin-keys create --name "my admin key"';

/**
 * Tells a newcomer how to make the API usable: with no active admin key, every request is a 401, so the server
 * prints the one command that creates one. A database that cannot answer yet is not worth a hint (`/ready` says it).
 */
export async function logStartupHints(store: Store, logger: Logger): Promise<void> {
  const adminKeys = await store.countActiveAdminKeys().catch(() => undefined);
  if (adminKeys === 0) {
    logger.info(`no admin key yet: create one with ${CREATE_ADMIN_KEY_COMMAND} (same DATABASE_URL as the server)`);
  }
}
