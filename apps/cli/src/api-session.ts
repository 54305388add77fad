import {
  API_KEY_STATUSES_BY_VERSION,
  API_VERSION,
  API_VERSIONS,
  LATEST_API_VERSION,
  OPERATION_INTRODUCED_IN,
  type SchemasOf,
} from '@apikeys/api-types';
import {
  type AdminClient,
  type ApiKeyStatus,
  ApiKeysError,
  type ApiVersion,
  AuthenticationError,
  ConnectionError,
  createAdminClient,
  hasOperation,
  PermissionError,
  TimeoutError,
  type VersionWith,
} from '@apikeys/client';
import { type Command, Option } from 'commander';
import { CommandError, UsageError } from './errors.js';
import { printable } from './format/text.js';

/** Where the admin API is unless `--base-url` or APIKEYS_BASE_URL says otherwise: the server's own default. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** The connection options every API command takes (from the flags or the environment). */
export interface ConnectionOptions {
  baseUrl?: string;
  adminKey?: string;
  apiVersion?: ApiVersion;
}

/** How a command tells where its API version came from, for messages. */
const VERSION_SETTING = '--api-version (or APIKEYS_API_VERSION)';

const HOW_TO_CREATE = 'an operator creates one with: apikeys admin-keys create --name NAME';

/**
 * Adds `--base-url` (APIKEYS_BASE_URL), `--admin-key` (APIKEYS_ADMIN_KEY) and `--api-version` (APIKEYS_API_VERSION)
 * to an API command.
 */
export function addConnectionOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--base-url <url>', 'base URL of the admin API')
        .env('APIKEYS_BASE_URL')
        .default(DEFAULT_BASE_URL)
        .helpGroup('Connection options:'),
    )
    .addOption(
      new Option(
        '--admin-key <key>',
        'admin key (sk-adm-...); prefer the variable, as other local users can see command lines',
      )
        .env('APIKEYS_ADMIN_KEY')
        .helpGroup('Connection options:'),
    )
    .addOption(
      new Option('--api-version <version>', 'API version to call, sent as vendor-version')
        .choices(API_VERSIONS)
        .env('APIKEYS_API_VERSION')
        .default(LATEST_API_VERSION)
        .helpGroup('Connection options:'),
    );
}

/** The API version of a command: `--api-version`, APIKEYS_API_VERSION, or the latest. */
export function versionOf(options: ConnectionOptions): ApiVersion {
  return options.apiVersion ?? LATEST_API_VERSION;
}

/**
 * Refuses (exit 2, before anything is sent) a command that calls an operation its API version does not have, naming
 * the version that introduced it.
 */
export function checkOperation<OperationId extends keyof typeof OPERATION_INTRODUCED_IN>(
  options: ConnectionOptions,
  command: string,
  operationId: OperationId,
): VersionWith<OperationId> {
  const version = versionOf(options);
  if (!hasOperation(version, operationId)) {
    throw new UsageError(
      `${command} calls ${operationId}, available from API version ${OPERATION_INTRODUCED_IN[operationId]}; ` +
        `${VERSION_SETTING} is ${version}`,
    );
  }
  return version;
}

/**
 * The first API version with expiry (`expires_at`): the first whose key statuses include `expired`, since the spec
 * introduced both together.
 */
const EXPIRY_SINCE = API_VERSIONS.find((version) =>
  (API_KEY_STATUSES_BY_VERSION[version] as readonly string[]).includes('expired'),
);

/** Refuses (exit 2, before anything is sent) an expiry flag in an API version that has no expiry. */
export function checkExpiry(options: ConnectionOptions, flag: string): void {
  const version = versionOf(options);
  if (!(API_KEY_STATUSES_BY_VERSION[version] as readonly string[]).includes('expired')) {
    throw new UsageError(
      `${flag} needs API version ${EXPIRY_SINCE ?? LATEST_API_VERSION} or later, which has expiry; ` +
        `${VERSION_SETTING} is ${version}`,
    );
  }
}

/**
 * Whether the keys of each API version have `permissions` and `metadata`, read from the generated types: a version
 * added to the spec is a compile error here until it is told, and a wrong value is one too.
 */
const HAS_KEY_ATTRIBUTES: {
  [Version in ApiVersion]: 'permissions' extends keyof SchemasOf<Version>['ApiKey'] ? true : false;
} = { [API_VERSION]: false, [LATEST_API_VERSION]: true };

/** The first API version whose keys have permissions and metadata. */
const KEY_ATTRIBUTES_SINCE = API_VERSIONS.find((version) => HAS_KEY_ATTRIBUTES[version]);

/** Refuses (exit 2, before anything is sent) a permission or metadata flag in a version whose keys have neither. */
export function checkKeyAttributes(options: ConnectionOptions, flag: string): void {
  const version = versionOf(options);
  if (!HAS_KEY_ATTRIBUTES[version]) {
    throw new UsageError(
      `${flag} needs API version ${KEY_ATTRIBUTES_SINCE ?? LATEST_API_VERSION} or later, whose keys have ` +
        `permissions and metadata; ${VERSION_SETTING} is ${version}`,
    );
  }
}

/** Every status a key may have in some API version, in the order of the latest version. */
export const STATUSES_OF_ANY_VERSION: readonly ApiKeyStatus<ApiVersion>[] = [
  ...new Set(
    API_VERSIONS.flatMap((version): readonly ApiKeyStatus<ApiVersion>[] => API_KEY_STATUSES_BY_VERSION[version]),
  ),
];

/** Refuses (exit 2, before anything is sent) a status that the command's API version does not have. */
export function checkStatus(options: ConnectionOptions, status: ApiKeyStatus<ApiVersion> | undefined): void {
  const version = versionOf(options);
  const statuses: readonly string[] = API_KEY_STATUSES_BY_VERSION[version];
  if (status !== undefined && !statuses.includes(status)) {
    throw new UsageError(
      `API version ${version} has no status ${status} (its statuses: ${statuses.join(', ')}); ` +
        `${VERSION_SETTING} is ${version}`,
    );
  }
}

/** The base URL, checked: http(s), no credentials, no query or fragment. Blank means the default. */
function checkBaseUrl(value: string | undefined): string {
  const text = value?.trim() || DEFAULT_BASE_URL;
  const problem = 'the base URL (--base-url or APIKEYS_BASE_URL)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${problem} must be an http:// or https:// URL (got ${JSON.stringify(printable(text))})`);
  }
  if (url.username !== '' || url.password !== '') {
    // Not echoed: the URL holds a password.
    throw new UsageError(`${problem} must not contain a user name or password`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new UsageError(`${problem} must be an http:// or https:// URL (got ${JSON.stringify(printable(text))})`);
  }
  return text.replace(/\/+$/, '');
}

/** The admin key, checked; never echoed in a message. */
function checkAdminKey(value: string | undefined): string {
  const key = value?.trim() ?? '';
  if (key === '') {
    throw new UsageError(`an admin key is required: set APIKEYS_ADMIN_KEY or pass --admin-key (${HOW_TO_CREATE})`);
  }
  // fetch refuses such a header with a message that quotes its value: the key would end up on stderr.
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError('the admin key (--admin-key or APIKEYS_ADMIN_KEY) must be printable ASCII without spaces');
  }
  return key;
}

/** The root cause's code (ECONNREFUSED, ENOTFOUND, ...) of a failed fetch, searching nested causes. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') {
      return code;
    }
    current = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
  }
  return undefined;
}

function deepestMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth += 1) {
    message = current.message;
    current = current.cause;
  }
  return message;
}

const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
};

/** The failure of an API call in the CLI's words: what happened, the request ID, and what to do about it. */
export function describeApiFailure(error: ApiKeysError, baseUrl: string): CommandError {
  if (error instanceof ConnectionError) {
    const code = errorCode(error.cause);
    const reason = (code === undefined ? undefined : CONNECTION_REASONS[code]) ?? deepestMessage(error.cause ?? error);
    return new CommandError(`cannot reach the API at ${baseUrl}: ${printable(reason)}`, {
      hint: 'is the server running? set APIKEYS_BASE_URL or pass --base-url',
      cause: error,
    });
  }
  if (error instanceof TimeoutError) {
    return new CommandError(`the API at ${baseUrl} did not answer in time: ${error.message}`, { cause: error });
  }
  const request = error.requestId === undefined ? '' : ` (request ${error.requestId})`;
  const message = `${error.type}: ${error.message}${request}`;
  const hint =
    error instanceof AuthenticationError
      ? `check APIKEYS_ADMIN_KEY or --admin-key; ${HOW_TO_CREATE}`
      : error instanceof PermissionError
        ? 'APIKEYS_ADMIN_KEY must hold an admin key (sk-adm-...), not an API key'
        : undefined;
  return new CommandError(printable(message), { ...(hint === undefined ? {} : { hint }), cause: error });
}

/**
 * Builds the admin API client of `version` from the connection options, runs `work` with it, and turns any error of
 * the client into a `CommandError` (exit 1) that says what happened; a missing or malformed setting is a
 * `UsageError` (exit 2).
 */
export async function withClientOf<Version extends ApiVersion, T>(
  options: ConnectionOptions,
  version: Version,
  work: (client: AdminClient<Version>) => Promise<T>,
): Promise<T> {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const client = createAdminClient({ baseUrl, apiKey: checkAdminKey(options.adminKey), apiVersion: version });
  try {
    return await work(client);
  } catch (error) {
    throw error instanceof ApiKeysError ? describeApiFailure(error, baseUrl) : error;
  }
}

/** `withClientOf` the command's API version, for the commands every version has; keys come in either shape. */
export function withApiClient<T>(
  options: ConnectionOptions,
  work: (client: AdminClient<ApiVersion>) => Promise<T>,
): Promise<T> {
  return withClientOf(options, versionOf(options), work);
}
