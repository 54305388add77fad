import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionOptions, withApiClient } from '../../api-session.js';
import { parseApiKeyId } from '../../arguments.js';
import { apiKeyDetails } from '../../format/api-key.js';
import { printJson, printLines } from '../../output.js';

interface GetOptions extends ConnectionOptions {
  json?: boolean;
}

/** `apikeys keys get`: `getApiKey`, as `field: value` lines or as JSON. */
export function registerKeysGet(keys: Command): void {
  const command = keys
    .command('get')
    .description('show one API key')
    .argument('<api_key_id>', 'ID of the API key (apikey_...)', parseApiKeyId)
    .option('--json', "print the API's response as JSON");
  addConnectionOptions(command).action((id: string, options: GetOptions) =>
    withApiClient(options, async (client) => {
      const key = await client.apiKeys.retrieve(id);
      if (options.json) {
        printJson(key);
      } else {
        printLines(apiKeyDetails(key));
      }
    }),
  );
}
