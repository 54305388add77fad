import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { type ConnectionOptions, checkKeyAttributes } from './api-session.js';
import { parseMetadata, parsePermission } from './arguments.js';

/** The flags of `keys issue` and `keys update` that set a key's permissions and metadata. */
export interface KeyAttributeOptions {
  /** `--permission`, once per name, in the order given. */
  permission?: string[];
  /** False with `--no-permissions` (update only); true (its default) otherwise. */
  permissions?: boolean;
  metadata?: Record<string, unknown>;
  metadataFile?: Record<string, unknown>;
}

/** The permissions and metadata of a request body; a field is left out when no flag sets it. */
export interface KeyAttributes {
  permissions?: string[];
  metadata?: Record<string, unknown>;
}

/** The metadata of `--metadata-file <path>`: the file's JSON object; `-` reads standard input. */
function readMetadataFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new InvalidArgumentError(`cannot read it (${reason}).`);
  }
  return parseMetadata(text);
}

/**
 * Adds `--permission <name>` (repeatable), `--metadata <json>` and `--metadata-file <path>` (exclusive) to `keys issue`
 * (`update: false`: what the new key gets) or `keys update` (`update: true`: what replaces the key's, with
 * `--no-permissions` to remove every permission).
 */
export function addKeyAttributeOptions(command: Command, options: { update: boolean }): Command {
  const { update } = options;
  const permission = new Option(
    '--permission <name>',
    update
      ? 'replace all the permissions of the key with these: documents.read, documents.* or * (repeat for several)'
      : 'a permission of the key: documents.read, documents.* (all under documents) or * (repeat for several)',
  ).argParser(parsePermission);
  command.addOption(update ? permission.conflicts('permissions') : permission);
  if (update) {
    command.option('--no-permissions', 'remove every permission of the key (sends "permissions": [])');
  }
  return command
    .addOption(
      new Option(
        '--metadata <json>',
        update
          ? "replace the metadata of the key with this JSON object, as a whole (no merge); --metadata '{}' removes it"
          : 'the organization\'s data about the key, a JSON object: \'{"owner":"team-billing"}\'',
      )
        .argParser(parseMetadata)
        .conflicts('metadataFile'),
    )
    .addOption(
      new Option(
        '--metadata-file <path>',
        'the same as --metadata, the JSON object read from a file (- for stdin)',
      ).argParser(readMetadataFile),
    );
}

/**
 * The permissions and metadata the flags set, for a request body: `--no-permissions` sends `[]`. Refuses them (exit
 * 2, before anything is sent) in an API version whose keys have neither.
 */
export function keyAttributes(options: KeyAttributeOptions & ConnectionOptions): KeyAttributes {
  const permissions = options.permissions === false ? [] : options.permission;
  const metadata = options.metadata ?? options.metadataFile;
  if (permissions !== undefined) {
    checkKeyAttributes(options, options.permissions === false ? '--no-permissions' : '--permission');
  }
  if (metadata !== undefined) {
    checkKeyAttributes(options, options.metadata === undefined ? '--metadata-file' : '--metadata');
  }
  return {
    ...(permissions === undefined ? {} : { permissions }),
    ...(metadata === undefined ? {} : { metadata }),
  };
}
