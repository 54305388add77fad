import { Command } from 'commander';
import { registerAdminKeys } from './commands/admin-keys.js';
import { registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';

/** Builds the `apikeys` command line. It throws CommanderError instead of exiting, so `main` owns exit codes. */
export function buildProgram(): Command {
  const program = new Command('apikeys')
    .description(
      'Operator CLI of the API key administration service. Uses the same DATABASE_URL as the server ' +
        '(default: SQLite at ./data/api-keys.sqlite). Every command prints one JSON document on stdout.',
    )
    .showHelpAfterError('(run with --help for usage)');
  registerMigrate(program);
  registerOrgs(program);
  registerAdminKeys(program);
  registerKeys(program);

  const configure = (command: Command) => {
    command.exitOverride();
    for (const sub of command.commands) {
      configure(sub);
    }
  };
  configure(program);
  return program;
}
