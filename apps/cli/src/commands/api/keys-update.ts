import type { ApiKeyStatus } from '@apikeys/api-types';
import type { ApiVersion, UpdateApiKeyBody } from '@apikeys/client';
import { type Command, Option } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkExpiry, withApiClient } from '../../api-session.js';
import { API_KEY_STATUSES, NAME_LENGTH, parseApiKeyId, parseName, parseTimestamp } from '../../arguments.js';
import { UsageError } from '../../errors.js';
import { apiKeyDetails } from '../../format/api-key.js';
import { addKeyAttributeOptions, type KeyAttributeOptions, keyAttributes } from '../../key-attributes.js';
import { printJson, printLines } from '../../output.js';

interface UpdateOptions extends ConnectionOptions, KeyAttributeOptions {
  name?: string;
  status?: ApiKeyStatus;
  expiresAt?: string;
  /** False with `--no-expiry`; true (its default) otherwise. */
  expiry: boolean;
  json?: boolean;
}

/**
 * `apikeys keys update`: `updateApiKey` (rename, change the status, set or remove the expiry, replace the permissions
 * or the metadata); prints the key as updated.
 */
export function registerKeysUpdate(keys: Command): void {
  const command = keys
    .command('update')
    .summary(
      'rename an API key, change its status, set or remove its expiry, replace its permissions or metadata; prints ' +
        'the key as updated',
    )
    .description(
      'rename an API key, change its status, set or remove its expiry, or replace its permissions or its metadata; ' +
        'prints the key as updated. --permission (repeated) replaces the whole list, and --no-permissions removes ' +
        "every permission; --metadata or --metadata-file replaces the whole object (no merge), and --metadata '{}' " +
        'removes it. What is not given stays as it is.',
    )
    .argument('<api_key_id>', 'ID of the API key (apikey_...)', parseApiKeyId)
    .option('--name <name>', `new name (${NAME_LENGTH})`, parseName)
    .addOption(new Option('--status <status>', 'new status').choices(API_KEY_STATUSES))
    .addOption(
      new Option('--expires-at <time>', 'new expiry, an RFC 3339 time in the future (2027-01-31T00:00:00Z)')
        .argParser(parseTimestamp)
        .conflicts('expiry'),
    )
    .option('--no-expiry', 'remove the expiry: the key never expires');
  addKeyAttributeOptions(command, { update: true }).option('--json', "print the API's response as JSON");
  addConnectionOptions(command).action((id: string, options: UpdateOptions) => {
    const expiry = options.expiresAt !== undefined ? options.expiresAt : options.expiry ? undefined : null;
    const attributes = keyAttributes(options);
    if (
      options.name === undefined &&
      options.status === undefined &&
      expiry === undefined &&
      Object.keys(attributes).length === 0
    ) {
      throw new UsageError(
        'nothing to update: pass --name, --status, --expires-at, --no-expiry, --permission, --no-permissions, ' +
          '--metadata or --metadata-file',
      );
    }
    if (expiry !== undefined) {
      checkExpiry(options, expiry === null ? '--no-expiry' : '--expires-at');
    }
    const body: UpdateApiKeyBody<ApiVersion> = {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(expiry === undefined ? {} : { expires_at: expiry }),
      ...attributes,
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
