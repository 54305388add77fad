import type { ApiKeyStatus } from '@apikeys/api-types';
import type { UpdateApiKeyBody } from '@apikeys/client';
import { type Command, Option } from 'commander';
import { addConnectionOptions, type ConnectionOptions, withApiClient } from '../../api-session.js';
import { API_KEY_STATUSES, NAME_LENGTH, parseApiKeyId, parseName } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { apiKeyDetails } from '../../format/api-key.js';
import { printJson, printLines } from '../../output.js';

interface UpdateOptions extends ConnectionOptions {
  name?: string;
  status?: ApiKeyStatus;
  json?: boolean;
}

/** `apikeys keys update`: `updateApiKey` (rename and/or change the status); prints the key as updated. */
export function registerKeysUpdate(keys: Command): void {
  const command = keys
    .command('update')
    .description('rename an API key and/or change its status; prints the key as updated')
    .argument('<api_key_id>', 'ID of the API key (apikey_...)', parseApiKeyId)
    .option('--name <name>', `new name (${NAME_LENGTH})`, parseName)
    .addOption(new Option('--status <status>', 'new status').choices(API_KEY_STATUSES))
    .option('--json', "print the API's response as JSON");
  addConnectionOptions(command).action((id: string, options: UpdateOptions) => {
    if (options.name === undefined && options.status === undefined) {
      throw new UsageError('nothing to update: pass --name, --status or both');
    }
    const body: UpdateApiKeyBody = {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.status === undefined ? {} : { status: options.status }),
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
