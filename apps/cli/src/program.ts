import { Command } from 'commander';
import { registerAudit } from './commands/api/audit-list.js';
import { registerKeysGet } from './commands/api/keys-get.js';
import { registerKeysHistory } from './commands/api/keys-history.js';
import { registerKeysIssue } from './commands/api/keys-issue.js';
import { registerKeysList } from './commands/api/keys-list.js';
import { registerKeysRotate } from './commands/api/keys-rotate.js';
import { registerKeysUpdate } from './commands/api/keys-update.js';
import { registerAdminKeys, registerVerifierKeys } from './commands/credential-keys.js';
import { HELP_GROUPS, registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOrgs } from './commands/orgs.js';

// One line per paragraph: commander wraps the help to the terminal's width.
const DESCRIPTION = [
  'Command line of the API key administration service.',
  'Database commands (operator): migrate, orgs, admin-keys, verifier-keys, keys create, keys seed. They work ' +
    "directly on the database named by DATABASE_URL, the same as the server's (default: SQLite at " +
    './data/api-keys.sqlite), and print one JSON document on stdout.',
  'API commands (admin): keys list, keys get, keys update, keys issue, keys rotate, keys history, audit list. They ' +
    'call the admin API at ' +
    'APIKEYS_BASE_URL (or --base-url; default: http://127.0.0.1:8080) with the admin key in APIKEYS_ADMIN_KEY (or ' +
    '--admin-key; an operator creates one with: apikeys admin-keys create), in the latest API version unless ' +
    'APIKEYS_API_VERSION (or --api-version) says otherwise, and print a table or "field: value" lines, or JSON ' +
    'with --json (JSON Lines for the audit trail). keys issue and keys rotate print the new secret on stdout, this ' +
    'once.',
  'Exit codes: 0 success, 1 failure (an API error, an unreachable API or database), 2 bad usage.',
].join('\n\n');

/** Builds the `apikeys` command line. It throws CommanderError instead of exiting, so `main` owns exit codes. */
export function buildProgram(): Command {
  const program = new Command('apikeys').description(DESCRIPTION).showHelpAfterError('(run with --help for usage)');
  registerMigrate(program);
  registerOrgs(program);
  registerAdminKeys(program);
  registerVerifierKeys(program);
  const keys = registerKeys(program);
  keys.commandsGroup(HELP_GROUPS.api);
  registerKeysList(keys);
  registerKeysGet(keys);
  registerKeysUpdate(keys);
  registerKeysIssue(keys);
  registerKeysRotate(keys);
  registerKeysHistory(keys);
  registerAudit(program);

  const configure = (command: Command) => {
    command.exitOverride();
    for (const sub of command.commands) {
      configure(sub);
    }
  };
  configure(program);
  return program;
}
