import type { ApiKeyStatus } from '@apikeys/api-types';
import type { ApiVersion, UpdateApiKeyBody } from '@apikeys/client';
import { type Command, Option } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkExpiry, withApiClient } from '../../api-session.js';
import { API_KEY_STATUSES, NAME_LENGTH, parseApiKeyId, parseName, parseTimestamp } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { apiKeyDetails } from '../../format/api-key.js';
import { printJson, printLines } from '../../output.js';

interface UpdateOptions extends ConnectionOptions {
  name?: string;
  status?: ApiKeyStatus;
  expiresAt?: string;
  /** False with `--no-expiry`; true (its default) otherwise. */
  expiry: boolean;
  json?: boolean;
}

/**
 * `apikeys keys update`: `updateApiKey` (rename, change the status, set or remove the expiry); prints the key as
 * updated.
 */
export function registerKeysUpdate(keys: Command): void {
  const command = keys
    .command('update')
    .description('rename an API key, change its status, or set or remove its expiry; prints the key as updated')
    .argument('<api_key_id>', 'ID of the API key (apikey_...)', parseApiKeyId)
    .option('--name <name>', `new name (${NAME_LENGTH})`, parseName)
    .addOption(new Option('--status <status>', 'new status').choices(API_KEY_STATUSES))
    .addOption(
      new Option('--expires-at <time>', 'new expiry, an RFC 3339 time in the future (2027-01-31T00:00:00Z)')
        .argParser(parseTimestamp)
        .conflicts('expiry'),
    )
    .option('--no-expiry', 'remove the expiry: the key never expires')
    .option('--json', "print the API's response as JSON");
  addConnectionOptions(command).action((id: string, options: UpdateOptions) => {
    const expiry = options.expiresAt !== undefined ? options.expiresAt : options.expiry ? undefined : null;
    if (options.name === undefined && options.status === undefined && expiry === undefined) {
      throw new UsageError('nothing to update: pass --name, --status, --expires-at or --no-expiry');
    }
    if (expiry !== undefined) {
      checkExpiry(options, expiry === null ? '--no-expiry' : '--expires-at');
    }
    const body: UpdateApiKeyBody<ApiVersion> = {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(expiry === undefined ? {} : { expires_at: expiry }),
    };
    return withApiClient(options, async (client) => {
      const key = await client.apiKeys.update(id, body);
      if (options.json) {
        printJson(key);
      } else {
        printLines(apiKeyDetails(key));
      }
    });
  });
}
