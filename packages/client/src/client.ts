import { API_VERSION, type ApiKey, type ClientPaths } from '@apikeys/api-types';
import createClient from 'openapi-fetch';
import { ApiError, errorFromResponse } from './errors.js';
import { ApiKeyPage } from './pagination.js';
import { checkSetting, type FetchFunction, sendWithRetries, type TransportSettings } from './transport.js';
import type {
  ApiKeyId,
  ApiVersion,
  GetApiKeyResponse,
  ListApiKeysQuery,
  UpdateApiKeyBody,
  UpdateApiKeyResponse,
} from './types.js';

/**
 * The API version sent in `vendor-version` unless another is chosen: the version of the spec this client's types
 * were generated from.
 */
export const DEFAULT_API_VERSION: ApiVersion = API_VERSION;

/** Defaults of the retry and timeout settings. */
export const DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 60_000,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 8_000,
} as const;

/** Options of `createAdminClient`. */
export interface AdminClientOptions {
  /** The API's origin (and path prefix, if any), e.g. `https://admin.example.com`. */
  baseUrl: string;
  /** An organization admin key (`sk-adm-...`), sent as `x-api-key`. */
  apiKey: string;
  /** The API version, sent as `vendor-version`. Default: `DEFAULT_API_VERSION`. */
  version?: ApiVersion;
  /** The fetch to use; default `globalThis.fetch`, looked up at each request. */
  fetch?: FetchFunction;
  /** Retries after the first attempt of a request (connection errors, timeouts, 408, 429, 5xx). Default 2. */
  maxRetries?: number;
  /** Time allowed for each attempt, until the whole response body is read. Default 60 000 ms. */
  timeoutMs?: number;
  /** The first retry delay, doubled at each retry (with jitter) unless `retry-after` says otherwise. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** The cap of the backoff delay. Default 8 000 ms. */
  retryMaxDelayMs?: number;
}

/** Options of a single call; they apply to every page an auto-paginating call fetches. */
export interface RequestOptions {
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  maxRetries?: number;
  timeoutMs?: number;
}

/** The operations on the organization's API keys. */
export interface ApiKeysResource {
  /** `listApiKeys`: one page of keys, newest first, which can fetch its neighbours and iterate onwards. */
  list(query?: ListApiKeysQuery, options?: RequestOptions): Promise<ApiKeyPage>;
  /**
   * Every key matching `query`, fetched page by page: forwards (older) with `after_id` = `last_id`, or backwards
   * (newer) with `before_id` = `first_id` when `query` has a `before_id`.
   */
  listAll(query?: ListApiKeysQuery, options?: RequestOptions): AsyncGenerator<ApiKey, void, undefined>;
  /** `getApiKey`: one key. */
  retrieve(apiKeyId: ApiKeyId, options?: RequestOptions): Promise<GetApiKeyResponse>;
  /** `updateApiKey`: renames a key and/or changes its status; returns the key as updated. */
  update(apiKeyId: ApiKeyId, body: UpdateApiKeyBody, options?: RequestOptions): Promise<UpdateApiKeyResponse>;
}

/** A client of the admin API. */
export interface AdminClient {
  readonly apiKeys: ApiKeysResource;
}

/** What openapi-fetch resolves with, success or error. */
interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/** What each operation passes on to openapi-fetch: the per-call fetch and the caller's signal. */
interface CallInit {
  fetch: FetchFunction;
  signal?: AbortSignal;
}

function checkText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${name} must be a non-empty string`);
  }
  return value;
}

/** `.` and `..` would be resolved away by URL parsing and reach another path, so they are refused with the empty ID. */
function checkApiKeyId(apiKeyId: unknown): string {
  const id = checkText('apiKeyId', apiKeyId);
  if (id === '.' || id === '..') {
    throw new TypeError(`apiKeyId must not be "${id}"`);
  }
  return id;
}

/** The settings of a call: the client's, with the call's overrides, checked. */
function resolveSettings(base: TransportSettings, overrides: RequestOptions = {}): TransportSettings {
  const integer = { min: 0, integer: true };
  return {
    fetch: base.fetch,
    maxRetries: checkSetting('maxRetries', overrides.maxRetries ?? base.maxRetries, integer),
    timeoutMs: checkSetting('timeoutMs', overrides.timeoutMs ?? base.timeoutMs, { min: 1, integer: false }),
    retryBaseDelayMs: checkSetting('retryBaseDelayMs', base.retryBaseDelayMs, { min: 0, integer: false }),
    retryMaxDelayMs: checkSetting('retryMaxDelayMs', base.retryMaxDelayMs, { min: 0, integer: false }),
  };
}

/**
 * Creates a client of the admin API. Every request carries `x-api-key` and `vendor-version`; failed attempts are
 * retried (see `maxRetries`), each attempt is bounded by `timeoutMs`, and every failure is thrown as a subclass of
 * `ApiKeysError`.
 */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const baseUrl = checkText('baseUrl', options.baseUrl);
  const apiKey = checkText('apiKey', options.apiKey);
  // fetch would refuse such a header value with an error that quotes it: refuse it here, without echoing the key.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new TypeError('apiKey must be printable ASCII without spaces or line breaks');
  }
  const defaults = resolveSettings({
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
  });

  const http = createClient<ClientPaths>({
    baseUrl,
    headers: { 'x-api-key': apiKey, 'vendor-version': options.version ?? DEFAULT_API_VERSION },
    // The API never redirects; following one to another origin would hand it the admin key.
    redirect: 'error',
  });

  /**
   * Runs one operation through the retrying transport and returns its parsed body with the final response; turns
   * an error response into the matching `ApiKeysError`.
   */
  async function call<Data>(
    requestOptions: RequestOptions | undefined,
    operation: (init: CallInit) => Promise<FetchResult<Data>>,
  ): Promise<{ data: Data; response: Response }> {
    const settings = resolveSettings(defaults, requestOptions);
    const final: { response?: Response } = {};
    const init: CallInit = {
      fetch: async (request) => {
        final.response = await sendWithRetries(request, settings);
        return final.response;
      },
      ...(requestOptions?.signal === undefined ? {} : { signal: requestOptions.signal }),
    };
    let result: FetchResult<Data>;
    try {
      result = await operation(init);
    } catch (error) {
      if (error instanceof SyntaxError && final.response !== undefined) {
        throw new ApiError('the response body is not valid JSON', {
          status: final.response.status,
          requestId: final.response.headers.get('request-id') ?? undefined,
          headers: final.response.headers,
          cause: error,
        });
      }
      throw error;
    }
    const { data, error, response } = result;
    if (error !== undefined || !response.ok) {
      throw errorFromResponse(response, error);
    }
    if (data === undefined) {
      throw new ApiError('the response has no body', {
        status: response.status,
        requestId: response.headers.get('request-id') ?? undefined,
        headers: response.headers,
      });
    }
    return { data, response };
  }

  async function list(query: ListApiKeysQuery = {}, requestOptions?: RequestOptions): Promise<ApiKeyPage> {
    const { data, response } = await call(requestOptions, (init) =>
      http.GET('/v1/organizations/api_keys', { params: { query }, ...init }),
    );
    return new ApiKeyPage(data, {
      query: { ...query },
      requestId: response.headers.get('request-id') ?? undefined,
      fetchPage: (next) => list(next, requestOptions),
    });
  }

  const apiKeys: ApiKeysResource = {
    list,

    async *listAll(query, requestOptions) {
      yield* await list(query, requestOptions);
    },

    async retrieve(apiKeyId, requestOptions) {
      const path = { api_key_id: checkApiKeyId(apiKeyId) };
      const { data } = await call(requestOptions, (init) =>
        http.GET('/v1/organizations/api_keys/{api_key_id}', { params: { path }, ...init }),
      );
      return data;
    },

    async update(apiKeyId, body, requestOptions) {
      const path = { api_key_id: checkApiKeyId(apiKeyId) };
      const { data } = await call(requestOptions, (init) =>
        http.POST('/v1/organizations/api_keys/{api_key_id}', { params: { path }, body, ...init }),
      );
      return data;
    },
  };

  return { apiKeys };
}
