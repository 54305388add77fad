import type { ApiKeyStatus } from '@apikeys/api-types';
import { toApiKeyJson } from '@apikeys/server/serializers';
import { type Command, Option } from 'commander';
import { API_KEY_STATUSES, NAME_LENGTH, parseId, parseInteger, parseName } from '../arguments.js';
import { printJson } from '../output.js';
import { operatorChanges, resolveOrganization, withStore } from '../store-session.js';

/** The creator recorded when `--created-by` is not given: this CLI, acting as a service account. */
const CLI_SERVICE_ACCOUNT = { id: 'svcacct_apikeys_cli', type: 'service_account' } as const;

interface CreateOptions {
  name: string;
  org?: string;
  workspaceId?: string;
  createdBy?: string;
  status?: ApiKeyStatus;
}

interface SeedOptions {
  count: number;
  org?: string;
  workspaces: number;
  users: number;
  seed: number;
}

/** Help headings of the two kinds of `keys` subcommands. */
export const HELP_GROUPS = {
  database: 'Database commands (operator; DATABASE_URL):',
  api: 'API commands (admin; APIKEYS_BASE_URL and APIKEYS_ADMIN_KEY):',
} as const;

/**
 * `apikeys keys create|seed`: API keys, the resource the admin API manages, written directly to the database.
 * Returns the `keys` command, to which the API commands (list, get, update, issue, rotate, history) are added.
 */
export function registerKeys(program: Command): Command {
  const keys = program
    .command('keys')
    .description(
      'API keys: create and seed them in the database; list, get, update, issue, rotate them and show their history ' +
        'through the admin API',
    )
    .commandsGroup(HELP_GROUPS.database);

  keys
    .command('create')
    .description('create an API key in the database; its secret is printed this once and cannot be shown again')
    .requiredOption('--name <name>', `key name (${NAME_LENGTH})`, parseName)
    .option('--org <org_id>', 'organization (default: the default organization)', parseId)
    .option('--workspace-id <workspace_id>', 'workspace (default: the default workspace)', parseId)
    .option('--created-by <user_id>', `ID of the user who creates it (default: ${CLI_SERVICE_ACCOUNT.id})`, parseId)
    .addOption(new Option('--status <status>', 'initial status').choices(API_KEY_STATUSES).default('active'))
    .action((options: CreateOptions) =>
      withStore(async (store) => {
        const organizationId = await resolveOrganization(store, options.org);
        const { apiKey, secret } = await store.createApiKey(
          {
            organizationId,
            name: options.name,
            workspaceId: options.workspaceId ?? null,
            createdBy: options.createdBy ? { id: options.createdBy, type: 'user' } : CLI_SERVICE_ACCOUNT,
            status: options.status,
          },
          operatorChanges(),
        );
        printJson({ ...toApiKeyJson(apiKey, apiKey.createdAt), key: secret });
      }),
    );

  keys
    .command('seed')
    .description('bulk-create keys for trying out pagination and load (with no secret anyone knows)')
    .requiredOption('--count <n>', 'number of keys to create', parseInteger(1, 10_000_000))
    .option('--org <org_id>', 'organization (default: the default organization)', parseId)
    .option('--workspaces <k>', 'spread keys over K workspaces plus the default one', parseInteger(0, 10_000), 3)
    .option('--users <u>', 'spread keys over U creating users', parseInteger(1, 100_000), 5)
    .option('--seed <int>', 'seed of the pseudo-random spread', parseInteger(0, 2 ** 32 - 1), 1)
    .action((options: SeedOptions) =>
      withStore(async (store) => {
        const organizationId = await resolveOrganization(store, options.org);
        const created = await store.seedApiKeys(
          {
            organizationId,
            count: options.count,
            workspaces: options.workspaces,
            users: options.users,
            seed: options.seed,
          },
          operatorChanges(),
        );
        printJson({ created });
      }),
    );

  return keys;
}
