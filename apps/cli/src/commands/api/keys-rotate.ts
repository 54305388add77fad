import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionOptions, checkOperation, withClientOf } from '../../api-session.js';
import { parseApiKeyId, parseDuration } from '../../arguments.js';
import { rotatedKeyDetails } from '../../format/api-key.js';
import { printJson, printLines } from '../../output.js';

interface RotateOptions extends ConnectionOptions {
  /** Seconds. */
  grace?: number;
  json?: boolean;
}

/** `apikeys keys rotate`: `rotateApiKey`; prints the new key, its secret (shown this once) and the old key's fate. */
export function registerKeysRotate(keys: Command): void {
  const command = keys
    .command('rotate')
    .summary('replace an API key with a new one, the old one working for a grace period; prints the new secret once')
    .description(
      'replace an API key with a new one (new ID and secret; same name, scope, principal and expiry) through the ' +
        'admin API; the old key keeps working for the grace period. The new secret is printed this once, on stdout.',
    )
    .argument('<api_key_id>', 'ID of the API key to replace (apikey_...)', parseApiKeyId)
    .option(
      '--grace <duration>',
      'how long the old key keeps working: 90m, 12h, 1d, or seconds (default: 0, it stops at once)',
      parseDuration({ seconds: true, positive: false }),
    )
    .option('--json', "print the API's response as JSON: the new key, its secret (key) and rotated_api_key");
  addConnectionOptions(command).action((id: string, options: RotateOptions) => {
    const version = checkOperation(options, 'keys rotate', 'rotateApiKey');
    return withClientOf(options, version, async (client) => {
      const rotated = await client.apiKeys.rotate(
        id,
        options.grace === undefined ? undefined : { grace_period_seconds: options.grace },
      );
      if (options.json) {
        printJson(rotated);
      } else {
        printLines(rotatedKeyDetails(rotated));
      }
    });
  });
}
