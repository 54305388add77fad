import {
  type AdminClient,
  ApiKeysError,
  AuthenticationError,
  ConnectionError,
  createAdminClient,
  PermissionError,
  TimeoutError,
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
}

const HOW_TO_CREATE = 'an operator creates one with: apikeys admin-keys create --name NAME';

/** Adds `--base-url` (APIKEYS_BASE_URL) and `--admin-key` (APIKEYS_ADMIN_KEY) to an API command. */
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
    );
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
 * Builds the admin API client from the connection options, runs `work` with it, and turns any error of the client
 * into a `CommandError` (exit 1) that says what happened; a missing or malformed setting is a `UsageError` (exit 2).
 */
export async function withApiClient<T>(
  options: ConnectionOptions,
  work: (client: AdminClient) => Promise<T>,
): Promise<T> {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const client = createAdminClient({ baseUrl, apiKey: checkAdminKey(options.adminKey) });
  try {
    return await work(client);
  } catch (error) {
    throw error instanceof ApiKeysError ? describeApiFailure(error, baseUrl) : error;
  }
}
