import type { CreateApiKeyBody } from '@apikeys/client';
import { type Command, Option } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkOperation, withClientOf } from '../../api-session.js';
import { NAME_LENGTH, parseDuration, parseId, parseName, parseTimestamp } from '../../arguments.js';
import { createdKeyDetails } from '../../format/api-key.js';
import { addKeyAttributeOptions, type KeyAttributeOptions, keyAttributes } from '../../key-attributes.js';
import { printJson, printLines } from '../../output.js';

interface IssueOptions extends ConnectionOptions, KeyAttributeOptions {
  name: string;
  workspaceId?: string;
  organizationScope?: boolean;
  principalUser?: string;
  principalServiceAccount?: string;
  expiresAt?: string;
  /** Seconds from now. */
  expiresIn?: number;
  json?: boolean;
}

// Named `issue`, not `create`: `keys create` is the operator's database command (DATABASE_URL), whose name, flags and
// output scripts depend on. This one goes through the admin API as the admin, like `list`, `get` and `update`.
const DESCRIPTION =
  'issue a new API key through the admin API, as the admin (createApiKey). Unlike the operator command ' +
  '`keys create`, which writes to the database directly, it needs only the admin key, and the API records the ' +
  'admin key as its creator. The secret is printed this once, on stdout, and cannot be shown again. ' +
  'Its permissions (--permission, repeated) and metadata (--metadata or --metadata-file) are none unless given.';

/** The body of `createApiKey` from the flags. */
function toBody(options: IssueOptions): CreateApiKeyBody {
  const expiresAt =
    options.expiresIn === undefined ? options.expiresAt : new Date(Date.now() + options.expiresIn * 1000).toISOString();
  const principal =
    options.principalUser !== undefined
      ? ({ type: 'user_actor', user_id: options.principalUser } as const)
      : options.principalServiceAccount !== undefined
        ? ({ type: 'service_account_actor', service_account_id: options.principalServiceAccount } as const)
        : undefined;
  return {
    name: options.name,
    ...(options.organizationScope ? { workspace_id: null } : {}),
    ...(options.workspaceId === undefined ? {} : { workspace_id: options.workspaceId }),
    ...(principal === undefined ? {} : { principal }),
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    ...keyAttributes(options),
  };
}

/** `apikeys keys issue`: `createApiKey`; prints the new key with its secret, shown this once. */
export function registerKeysIssue(keys: Command): void {
  const command = keys
    .command('issue')
    .summary(
      'issue a new API key as the admin, through the API (not the database, as create does); prints its secret once',
    )
    .description(DESCRIPTION)
    .requiredOption('--name <name>', `key name (${NAME_LENGTH})`, parseName)
    .addOption(
      new Option('--workspace-id <workspace_id>', "workspace of the key (default: the organization's default one)")
        .argParser(parseId)
        .conflicts('organizationScope'),
    )
    .option('--organization-scope', 'no workspace: the key belongs to the organization (needs a --principal-*)')
    .addOption(
      new Option('--principal-user <user_id>', 'the user the key acts as')
        .argParser(parseId)
        .conflicts('principalServiceAccount'),
    )
    .addOption(new Option('--principal-service-account <id>', 'the service account the key acts as').argParser(parseId))
    .addOption(
      new Option('--expires-at <time>', 'when the key expires: an RFC 3339 time in the future (2027-01-31T00:00:00Z)')
        .argParser(parseTimestamp)
        .conflicts('expiresIn'),
    )
    .addOption(
      new Option('--expires-in <duration>', 'when the key expires, from now: 90m, 12h, 30d (default: never)').argParser(
        parseDuration({ seconds: false, positive: true }),
      ),
    );
  addKeyAttributeOptions(command, { update: false }).option(
    '--json',
    "print the API's response as JSON, the secret (key) included",
  );
  addConnectionOptions(command).action((options: IssueOptions) => {
    const version = checkOperation(options, 'keys issue', 'createApiKey');
    const body = toBody(options);
    return withClientOf(options, version, async (client) => {
      const created = await client.apiKeys.create(body);
      if (options.json) {
        printJson(created);
      } else {
        printLines(createdKeyDetails(created));
      }
    });
  });
}
