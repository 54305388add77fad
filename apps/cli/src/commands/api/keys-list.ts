import type { AdminClient, ApiKeyPage, ApiKeyStatus, ApiVersion, ListApiKeysQuery } from '@apikeys/client';
import { type Command, Option } from 'commander';
import {
  addConnectionOptions,
  type ConnectionOptions,
  checkKeyAttributes,
  checkStatus,
  STATUSES_OF_ANY_VERSION,
  withApiClient,
} from '../../api-session.js';
import { parseApiKeyId, parseId, parsePermissionName } from '../../arguments.js';
import { type AnyApiKey, apiKeyTable } from '../../format/api-key.js';
import { JsonListWriter } from '../../format/json-list.js';
import { keyProgress, NO_PROGRESS } from '../../format/progress.js';
import { printable, shellWords } from '../../format/text.js';
import { addCursorOptions, type CursorOptions, cursorQuery, limitOption } from '../../list-options.js';
import { printJson, printLines, writeStdout } from '../../output.js';

/** The page size of `--all` without `--limit`: fewer round trips than the API's default. */
export const ALL_PAGE_SIZE = 200;

const NO_KEYS = 'No API keys found.';

interface ListOptions extends ConnectionOptions, CursorOptions {
  status?: ApiKeyStatus<ApiVersion>;
  workspaceId?: string;
  createdBy?: string;
  permission?: string;
  limit?: number;
  all?: boolean;
  json?: boolean;
}

/**
 * The filters as `apikeys keys list` flags, for the footer's next-page command; `--api-version` too when it was given
 * as a flag (one from the environment still holds for the next command).
 */
function filterFlags(options: ListOptions, versionFlag: boolean): string[] {
  return [
    ...(versionFlag && options.apiVersion !== undefined ? ['--api-version', options.apiVersion] : []),
    ...(options.status === undefined ? [] : ['--status', options.status]),
    ...(options.workspaceId === undefined ? [] : ['--workspace-id', options.workspaceId]),
    ...(options.createdBy === undefined ? [] : ['--created-by', options.createdBy]),
    ...(options.permission === undefined ? [] : ['--permission', options.permission]),
    ...(options.limit === undefined ? [] : ['--limit', String(options.limit)]),
  ];
}

function toQuery(options: ListOptions, limit: number | undefined): ListApiKeysQuery<ApiVersion> {
  return {
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.workspaceId === undefined ? {} : { workspace_id: options.workspaceId }),
    ...(options.createdBy === undefined ? {} : { created_by_user_id: options.createdBy }),
    ...(options.permission === undefined ? {} : { permission: options.permission }),
    ...(limit === undefined ? {} : { limit }),
    ...cursorQuery(options),
  };
}

/** The footer of a page with more keys beyond it: the command that fetches the next page in the same direction. */
function footer(page: ApiKeyPage<ApiVersion>, options: ListOptions, versionFlag: boolean): string[] {
  const cursor = page.direction === 'before' ? page.first_id : page.last_id;
  if (!page.has_more || cursor === null) {
    return [];
  }
  const [label, flag] = page.direction === 'before' ? ['newer keys', '--before'] : ['next page', '--after'];
  const words = ['apikeys', 'keys', 'list', ...filterFlags(options, versionFlag), flag, cursor];
  return ['', printable(`${label}: ${shellWords(words)}`)];
}

async function listPage(client: AdminClient<ApiVersion>, options: ListOptions, versionFlag: boolean): Promise<void> {
  const page = await client.apiKeys.list(toQuery(options, options.limit));
  if (options.json) {
    printJson(page.toJSON());
    return;
  }
  printLines([...(page.data.length === 0 ? [NO_KEYS] : apiKeyTable(page.data)), ...footer(page, options, versionFlag)]);
}

async function listAll(client: AdminClient<ApiVersion>, options: ListOptions): Promise<void> {
  const keys = client.apiKeys.listAll(toQuery(options, options.limit ?? ALL_PAGE_SIZE));
  // Streamed JSON on a terminal shows its own progress; a progress line would be torn by it.
  const progress = options.json && process.stdout.isTTY ? NO_PROGRESS : keyProgress(process.stderr);
  let count = 0;
  try {
    if (options.json) {
      const writer = new JsonListWriter(writeStdout);
      for await (const key of keys) {
        await writer.add(key);
        progress.update(++count);
      }
      progress.done();
      await writer.end();
      return;
    }
    const all: AnyApiKey[] = [];
    for await (const key of keys) {
      all.push(key);
      progress.update(++count);
    }
    progress.done();
    printLines(all.length === 0 ? [NO_KEYS] : apiKeyTable(all));
  } finally {
    progress.done();
  }
}

/** `apikeys keys list`: `listApiKeys`, one page or every page, as a table or as JSON. */
export function registerKeysList(keys: Command): void {
  const command = keys
    .command('list')
    .description('list API keys, newest first: one page, or every page with --all')
    .addOption(new Option('--status <status>', 'only keys with this status').choices(STATUSES_OF_ANY_VERSION))
    .option('--workspace-id <workspace_id>', 'only keys of this workspace', parseId)
    .option('--created-by <user_id>', 'only keys created by this user', parseId)
    .option(
      '--permission <name>',
      'only keys whose permissions grant this one, wildcards included (documents.read: also documents.* and *)',
      parsePermissionName,
    )
    .addOption(limitOption('keys', ALL_PAGE_SIZE))
    .option('--all', 'fetch every page (progress on stderr when it is a terminal)')
    .option('--json', 'print the API\'s response as JSON; with --all, {"data": [every key]}');
  addCursorOptions(command, { noun: 'key', idName: 'api_key_id', parse: parseApiKeyId });
  addConnectionOptions(command).action((options: ListOptions, self: Command) => {
    checkStatus(options, options.status);
    if (options.permission !== undefined) {
      checkKeyAttributes(options, '--permission');
    }
    const versionFlag = self.getOptionValueSource('apiVersion') === 'cli';
    return withApiClient(options, (client) =>
      options.all ? listAll(client, options) : listPage(client, options, versionFlag),
    );
  });
}
