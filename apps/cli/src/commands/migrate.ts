import type { Command } from 'commander';
import { printJson } from '../output.js';
import { withStore } from '../store-session.js';

/** `apikeys migrate`: brings the database schema up to date. */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (the server also applies them at start)')
    .action(() => withStore(async (_store, applied) => printJson({ applied })));
}
