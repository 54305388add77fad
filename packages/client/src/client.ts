import { API_VERSIONS, type ClientPathsOf, LATEST_API_VERSION, OPERATION_INTRODUCED_IN } from '@apikeys/api-types';
import createClient from 'openapi-fetch';
import { ApiError, errorFromResponse, UnsupportedOperationError } from './errors.js';
import { ApiKeyPage, AuditEventPage } from './pagination.js';
import {
  checkSetting,
  type FetchFunction,
  type RequestOptions,
  type RetryPolicy,
  sendWithRetries,
  type TransportSettings,
  type VerifyOptions,
} from './transport.js';
import type {
  ApiKey,
  ApiKeyId,
  ApiVersion,
  AuditEvent,
  AuditEventId,
  CreateApiKeyBody,
  CreatedApiKey,
  GetApiKeyResponse,
  KeyVerification,
  LatestApiVersion,
  ListApiKeysQuery,
  ListAuditEventsQuery,
  RotateApiKeyBody,
  RotatedApiKey,
  UpdateApiKeyBody,
  UpdateApiKeyResponse,
  VersionWith,
} from './types.js';
import { resolveCacheOptions, type VerifierCacheOptions } from './verifier/cache-options.js';
import { createCachingVerifier, type VerifierCacheView, type VerifierTransport } from './verifier/caching-verifier.js';

/** The API version sent in `vendor-version` unless another is chosen: the latest version of the spec. */
export const DEFAULT_API_VERSION: LatestApiVersion = LATEST_API_VERSION;

/** Defaults of the retry and timeout settings of an admin client: patient, for people and scripts. */
export const DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 60_000,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 8_000,
} as const;

/**
 * Defaults of the retry and timeout settings of a verifier client: a gateway's request waits on a verification, so
 * a verification that cannot be answered (a key server frozen, down or slow) fails within `deadlineMs`, retries
 * included, and the gateway fails closed within 2 s.
 */
export const VERIFIER_DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 1_000,
  deadlineMs: 2_000,
  retryBaseDelayMs: 100,
  retryMaxDelayMs: 500,
} as const;

/** Options of `createAdminClient`. */
export interface AdminClientOptions {
  /** The API's origin (and path prefix, if any), e.g. `https://admin.example.com`. */
  baseUrl: string;
  /** An organization admin key (`sk-adm-...`), sent as `x-api-key`. */
  apiKey: string;
  /**
   * The API version, sent as `vendor-version` on every request; the client's types follow it. Default:
   * `DEFAULT_API_VERSION`, the latest.
   */
  apiVersion?: ApiVersion;
  /** @deprecated Use `apiVersion`, which wins when both are given. */
  version?: ApiVersion;
  /** The fetch to use; default `globalThis.fetch`, looked up at each request. */
  fetch?: FetchFunction;
  /**
   * Retries after the first attempt of a request (connection errors, timeouts, 408, 429, 5xx; a create or a rotation
   * only after a 429). Default 2.
   */
  maxRetries?: number;
  /** Time allowed for each attempt, until the whole response body is read. Default 60 000 ms. */
  timeoutMs?: number;
  /**
   * Time allowed for a whole request, every attempt and wait included: the last attempt is cut short at it (a
   * `TimeoutError`), and a retry whose wait (backoff or `retry-after`) would pass it is not made (the last error is
   * thrown at once). Default: none, each attempt is bounded by `timeoutMs` alone.
   */
  deadlineMs?: number;
  /** The first retry delay, doubled at each retry (with jitter) unless `retry-after` says otherwise. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** The cap of the backoff delay. Default 8 000 ms. */
  retryMaxDelayMs?: number;
}

/** The operations on the organization's API keys that every version has. */
export interface ApiKeysReadWrite<Version extends ApiVersion = LatestApiVersion> {
  /** `listApiKeys`: one page of keys, newest first, which can fetch its neighbours and iterate onwards. */
  list(query?: ListApiKeysQuery<Version>, options?: RequestOptions): Promise<ApiKeyPage<Version>>;
  /**
   * Every key matching `query`, fetched page by page: forwards (older) with `after_id` = `last_id`, or backwards
   * (newer) with `before_id` = `first_id` when `query` has a `before_id`.
   */
  listAll(
    query?: ListApiKeysQuery<Version>,
    options?: RequestOptions,
  ): AsyncGenerator<ApiKey<Version>, void, undefined>;
  /** `getApiKey`: one key. */
  retrieve(apiKeyId: ApiKeyId, options?: RequestOptions): Promise<GetApiKeyResponse<Version>>;
  /**
   * `updateApiKey`: renames a key and/or changes its status (and from v2026_10_21 its expiry); returns the key as
   * updated.
   */
  update(
    apiKeyId: ApiKeyId,
    body: UpdateApiKeyBody<Version>,
    options?: RequestOptions,
  ): Promise<UpdateApiKeyResponse<Version>>;
}

/** `apiKeys.create`, in the versions that have `createApiKey`. */
export interface ApiKeysCreate<Version extends VersionWith<'createApiKey'> = LatestApiVersion> {
  /**
   * `createApiKey`: creates a key and returns it with its secret in `key`. The secret is shown this once: no later
   * call returns it. Never retried after a failure whose outcome is unknown (a timeout, a 5xx), which could create a
   * second key: only after a 429.
   */
  create(body: CreateApiKeyBody<Version>, options?: RequestOptions): Promise<CreatedApiKey<Version>>;
}

/** `apiKeys.rotate`, in the versions that have `rotateApiKey`. */
export interface ApiKeysRotate<Version extends VersionWith<'rotateApiKey'> = LatestApiVersion> {
  /**
   * `rotateApiKey`: replaces a key with a new one (new ID and secret, the old key's name, scope, principal and
   * expiry); the old key keeps working for `grace_period_seconds` (default 0). Returns the new key with its secret in
   * `key` (shown this once) and the old key as it now is in `rotated_api_key`. Retried only after a 429, as `create`.
   */
  rotate(
    apiKeyId: ApiKeyId,
    body?: RotateApiKeyBody<Version>,
    options?: RequestOptions,
  ): Promise<RotatedApiKey<Version>>;
}

/** `apiKeys.verify`, in the versions that have `verifyApiKey`. */
export interface ApiKeysVerify<Version extends VersionWith<'verifyApiKey'> = LatestApiVersion> {
  /**
   * `verifyApiKey`: whether `secret` is a valid key of the caller's organization (`valid`, and `code` says why not),
   * and which key it is. Callable with an admin key or a verifier key. Changes nothing, so it is retried like a read:
   * with a verifier client's defaults, every attempt and wait within 2 s (`deadlineMs`).
   */
  verify(secret: string, options?: VerifyOptions): Promise<KeyVerification<Version>>;
}

/** The API versions that have the audit trail: `listAuditEvents` and `getAuditEvent` (v2026_10_21 on). */
export type AuditTrailVersion = VersionWith<'listAuditEvents' | 'getAuditEvent'>;

/** The organization's audit trail, in the versions that have it (`AuditTrailVersion`). */
export interface AuditEventsResource<Version extends AuditTrailVersion = LatestApiVersion> {
  /**
   * `listAuditEvents`: one page of events, newest first, which can fetch its neighbours and iterate onwards. `type`
   * takes one type or a list of them (any of them).
   */
  list(query?: ListAuditEventsQuery<Version>, options?: RequestOptions): Promise<AuditEventPage<Version>>;
  /**
   * Every event matching `query`, fetched page by page: forwards (older) with `after_id` = `last_id`, or backwards
   * (newer) with `before_id` = `first_id` when `query` has a `before_id`. Holds one page at a time.
   */
  listAll(
    query?: ListAuditEventsQuery<Version>,
    options?: RequestOptions,
  ): AsyncGenerator<AuditEvent<Version>, void, undefined>;
  /** `getAuditEvent`: one event. */
  retrieve(auditEventId: AuditEventId, options?: RequestOptions): Promise<AuditEvent<Version>>;
}

/** A client for a gateway's verifier key: `keys.verify` only, in the latest API version. */
export interface VerifierClient {
  readonly apiVersion: LatestApiVersion;
  readonly keys: ApiKeysVerify<LatestApiVersion>;
  /** What the verifier's cache shows (see the `cache` option); undefined without a cache. */
  readonly cache: VerifierCacheView | undefined;
  /**
   * Ends the change feed, stops the timers and sends the last usage report (after the one in flight, if any; each
   * within `deadlineMs`); without a cache, does nothing.
   */
  close(): Promise<void>;
}

/**
 * Options of `createVerifierClient`: those of `createAdminClient` but the version, with the defaults of
 * `VERIFIER_DEFAULTS`, and `cache`. With the defaults, `keys.verify` settles within 2 s whatever the key server does
 * (frozen, down or slow), and so does each usage report.
 */
export interface VerifierClientOptions
  extends Omit<AdminClientOptions, 'apiVersion' | 'version' | keyof typeof VERIFIER_DEFAULTS> {
  /**
   * Retries after the first attempt of a verification (connection errors, timeouts, 408, 429, 5xx), each within
   * `deadlineMs`. Default 2.
   */
  maxRetries?: number;
  /** Time allowed for each attempt, until the whole response body is read. Default 1 000 ms. */
  timeoutMs?: number;
  /**
   * Time allowed for a whole verification (or usage report), every attempt and wait included: a gateway's request
   * waits no longer for an answer. The last attempt is cut short at it (a `TimeoutError`), and a retry whose wait
   * would pass it is not made. Default 2 000 ms.
   */
  deadlineMs?: number;
  /** The first retry delay, doubled at each retry (with jitter) unless `retry-after` says otherwise. Default 100 ms. */
  retryBaseDelayMs?: number;
  /** The cap of the backoff delay. Default 500 ms. */
  retryMaxDelayMs?: number;
  /**
   * Answers `keys.verify` from memory while the change feed says nothing changed (see the client's README, "Caching
   * verifier"): `true` for the defaults, or options. Default: no cache, every verification asks the server. What
   * memory cannot answer goes to the server within `deadlineMs`, as without a cache; the change feed and the usage
   * reports run beside the verifications, which never wait for them.
   */
  cache?: boolean | VerifierCacheOptions;
}

/** `Methods` when every version of `Version` has the operation; nothing otherwise. */
type IfOperation<Version extends ApiVersion, OperationId extends string, Methods> = [Version] extends [
  VersionWith<OperationId>,
]
  ? Methods
  : unknown;

/**
 * The operations on the organization's API keys in an API version: `list`, `listAll`, `retrieve` and `update` in
 * every version; `create`, `rotate` and `verify` only in a version that has `createApiKey`, `rotateApiKey` and
 * `verifyApiKey` (v2026_10_21 on).
 */
export type ApiKeysResource<Version extends ApiVersion = LatestApiVersion> = ApiKeysReadWrite<Version> &
  IfOperation<Version, 'createApiKey', ApiKeysCreate<Version & VersionWith<'createApiKey'>>> &
  IfOperation<Version, 'rotateApiKey', ApiKeysRotate<Version & VersionWith<'rotateApiKey'>>> &
  IfOperation<Version, 'verifyApiKey', ApiKeysVerify<Version & VersionWith<'verifyApiKey'>>>;

/** What every client has, whatever its API version. */
export interface AdminClientBase<Version extends ApiVersion = LatestApiVersion> {
  /** The API version this client sends in `vendor-version`, and whose types it uses. */
  readonly apiVersion: Version;
  readonly apiKeys: ApiKeysResource<Version>;
}

/**
 * A client of the admin API, speaking one API version: `apiKeys` in every version, and `auditEvents` only in a
 * version that has the audit trail (v2026_10_21 on).
 */
export type AdminClient<Version extends ApiVersion = LatestApiVersion> = AdminClientBase<Version> &
  IfOperation<
    Version,
    'listAuditEvents' | 'getAuditEvent',
    { readonly auditEvents: AuditEventsResource<Version & AuditTrailVersion> }
  >;

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

/**
 * An ID for a path parameter. `.` and `..` would be resolved away by URL parsing and reach another path, so they are
 * refused with the empty ID.
 */
function checkPathId(name: string, value: unknown): string {
  const id = checkText(name, value);
  if (id === '.' || id === '..') {
    throw new TypeError(`${name} must not be "${id}"`);
  }
  return id;
}

/** The settings of a call: the client's, with the call's overrides, checked. */
function resolveSettings(base: TransportSettings, overrides: RequestOptions = {}): TransportSettings {
  const integer = { min: 0, integer: true };
  const deadline = overrides.deadlineMs ?? base.deadlineMs;
  return {
    fetch: base.fetch,
    maxRetries: checkSetting('maxRetries', overrides.maxRetries ?? base.maxRetries, integer),
    timeoutMs: checkSetting('timeoutMs', overrides.timeoutMs ?? base.timeoutMs, { min: 1, integer: false }),
    deadlineMs: deadline === undefined ? undefined : checkSetting('deadlineMs', deadline, { min: 1, integer: false }),
    retryBaseDelayMs: checkSetting('retryBaseDelayMs', base.retryBaseDelayMs, { min: 0, integer: false }),
    retryMaxDelayMs: checkSetting('retryMaxDelayMs', base.retryMaxDelayMs, { min: 0, integer: false }),
  };
}

/**
 * The client as it is built, with every method of every version, typed with the union of the versions' shapes; each
 * overload of `createAdminClient` narrows it to one version. In a version without `createApiKey` or `rotateApiKey`,
 * `create` and `rotate` are there at run time only to say so (see `checkAvailable`), and so is `auditEvents` in a
 * version without the audit trail.
 */
interface EveryVersionClient {
  readonly apiVersion: ApiVersion;
  readonly apiKeys: ApiKeysReadWrite<ApiVersion> &
    ApiKeysCreate<VersionWith<'createApiKey'>> &
    ApiKeysRotate<VersionWith<'rotateApiKey'>> &
    ApiKeysVerify<VersionWith<'verifyApiKey'>>;
  readonly auditEvents: AuditEventsResource<AuditTrailVersion>;
}

/** The operations only the caching verifier uses, kept off the public client's type: by client. */
const verifierTransports = new WeakMap<object, Omit<VerifierTransport, 'verify'>>();

/**
 * Whether an API version has an operation: a version the spec lists, no older than the one that introduced the
 * operation (`OPERATION_INTRODUCED_IN`; the spec has never removed an operation). For the CLI and other callers that
 * pick the version at run time; a client's own type already says which methods it has.
 */
export function hasOperation<OperationId extends keyof typeof OPERATION_INTRODUCED_IN>(
  version: string,
  operationId: OperationId,
): version is VersionWith<OperationId> {
  const versions: readonly string[] = API_VERSIONS;
  const index = versions.indexOf(version);
  return index !== -1 && index >= versions.indexOf(OPERATION_INTRODUCED_IN[operationId]);
}

/**
 * Creates a client of the admin API for one API version: `apiVersion`, or the deprecated `version`, or else the
 * latest. Every request carries `x-api-key` and `vendor-version`; failed attempts are retried (see `maxRetries`),
 * each attempt is bounded by `timeoutMs`, and every failure is thrown as a subclass of `ApiKeysError`. The client's
 * types follow the version: a `v2023_06_01` client has no `create`, `rotate` or `auditEvents`, and its keys have that
 * version's shape.
 */
export function createAdminClient<Version extends ApiVersion>(
  options: AdminClientOptions & { apiVersion?: undefined; version: Version },
): AdminClient<Version>;
export function createAdminClient<Version extends ApiVersion = LatestApiVersion>(
  options: AdminClientOptions & { apiVersion?: Version },
): AdminClient<Version>;
export function createAdminClient(options: AdminClientOptions): EveryVersionClient {
  const baseUrl = checkText('baseUrl', options.baseUrl);
  const apiKey = checkText('apiKey', options.apiKey);
  // fetch would refuse such a header value with an error that quotes it: refuse it here, without echoing the key.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new TypeError('apiKey must be printable ASCII without spaces or line breaks');
  }
  const apiVersion = options.apiVersion ?? options.version ?? DEFAULT_API_VERSION;
  const defaults = resolveSettings({
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    deadlineMs: options.deadlineMs,
    retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
  });

  const config = {
    baseUrl,
    headers: { 'x-api-key': apiKey, 'vendor-version': apiVersion },
    // The API never redirects; following one to another origin would hand it the admin key.
    redirect: 'error',
  } as const;
  // Typed with what every version has (a union of the versions' shapes); the public types narrow it to the version
  // of this client, whose document the server checks every request and response against.
  const http = createClient<ClientPathsOf<ApiVersion>>(config);
  // The same client, typed with the versions that can create and rotate keys; used only when `apiVersion` is one.
  const lifecycleHttp = createClient<ClientPathsOf<VersionWith<'createApiKey' | 'rotateApiKey'>>>(config);
  // And typed with the versions that have the audit trail; used only when `apiVersion` is one.
  const auditHttp = createClient<ClientPathsOf<AuditTrailVersion>>(config);
  // And with the versions that have verification; used only when `apiVersion` is one.
  const verifyHttp = createClient<ClientPathsOf<VersionWith<'verifyApiKey'>>>(config);
  // And with the versions that have the change feed; used only by a verifier client, which has the latest version.
  const feedHttp = createClient<ClientPathsOf<VersionWith<'streamKeyChanges' | 'reportKeyUsage'>>>(config);

  /**
   * Runs one operation through the retrying transport and returns its parsed body with the final response; turns
   * an error response into the matching `ApiKeysError`.
   */
  async function call<Data>(
    requestOptions: RequestOptions | undefined,
    operation: (init: CallInit) => Promise<FetchResult<Data>>,
    retryPolicy: RetryPolicy = 'idempotent',
  ): Promise<{ data: Data; response: Response }> {
    const settings = resolveSettings(defaults, requestOptions);
    const final: { response?: Response } = {};
    const init: CallInit = {
      fetch: async (request) => {
        final.response = await sendWithRetries(request, settings, retryPolicy);
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

  /**
   * Refuses, before anything is sent, a method whose operation this client's version does not have. A version the
   * spec does not list is left to the server to judge.
   */
  function checkAvailable(method: string, operationId: keyof typeof OPERATION_INTRODUCED_IN): void {
    if ((API_VERSIONS as readonly string[]).includes(apiVersion) && !hasOperation(apiVersion, operationId)) {
      throw new UnsupportedOperationError(
        `${method} (${operationId}) is available from API version ${OPERATION_INTRODUCED_IN[operationId]}; ` +
          `this client uses API version ${apiVersion}`,
        { operationId, introducedIn: OPERATION_INTRODUCED_IN[operationId], apiVersion },
      );
    }
  }

  async function list(
    query: ListApiKeysQuery<ApiVersion> = {},
    requestOptions?: RequestOptions,
  ): Promise<ApiKeyPage<ApiVersion>> {
    const { data, response } = await call(requestOptions, (init) =>
      http.GET('/v1/organizations/api_keys', { params: { query }, ...init }),
    );
    return new ApiKeyPage<ApiVersion>(data, {
      query: { ...query },
      requestId: response.headers.get('request-id') ?? undefined,
      fetchPage: (next) => list(next, requestOptions),
    });
  }

  const apiKeys: EveryVersionClient['apiKeys'] = {
    list,

    async *listAll(query, requestOptions) {
      yield* await list(query, requestOptions);
    },

    async retrieve(apiKeyId, requestOptions) {
      const path = { api_key_id: checkPathId('apiKeyId', apiKeyId) };
      const { data } = await call(requestOptions, (init) =>
        http.GET('/v1/organizations/api_keys/{api_key_id}', { params: { path }, ...init }),
      );
      return data;
    },

    async update(apiKeyId, body, requestOptions) {
      const path = { api_key_id: checkPathId('apiKeyId', apiKeyId) };
      const { data } = await call(requestOptions, (init) =>
        http.POST('/v1/organizations/api_keys/{api_key_id}', { params: { path }, body, ...init }),
      );
      return data;
    },

    async create(body, requestOptions) {
      checkAvailable('apiKeys.create', 'createApiKey');
      const { data } = await call(
        requestOptions,
        (init) => lifecycleHttp.POST('/v1/organizations/api_keys', { body, ...init }),
        'not-idempotent',
      );
      return data;
    },

    async rotate(apiKeyId, body, requestOptions) {
      checkAvailable('apiKeys.rotate', 'rotateApiKey');
      const path = { api_key_id: checkPathId('apiKeyId', apiKeyId) };
      const { data } = await call(
        requestOptions,
        (init) =>
          lifecycleHttp.POST('/v1/organizations/api_keys/{api_key_id}/rotate', {
            params: { path },
            // Without a body the server applies the spec's default grace period; see RotateApiKeyBody for the cast.
            ...(body === undefined ? {} : { body: body as Required<RotateApiKeyBody> }),
            ...init,
          }),
        'not-idempotent',
      );
      return data;
    },

    async verify(secret, verifyOptions) {
      checkAvailable('apiKeys.verify', 'verifyApiKey');
      const key = checkText('secret', secret);
      const { permissions, ...requestOptions } = verifyOptions ?? {};
      if (permissions !== undefined && typeof permissions !== 'string') {
        throw new TypeError('permissions must be a string: a permission requirement such as "documents.read"');
      }
      // An empty or malformed requirement is the server's to refuse (a 400 that names the position).
      const body = permissions === undefined ? { key } : { key, permissions };
      const { data } = await call(requestOptions, (init) => verifyHttp.POST('/v1/keys/verify', { body, ...init }));
      return data;
    },
  };

  async function listAuditEvents(
    query: ListAuditEventsQuery<AuditTrailVersion> = {},
    requestOptions?: RequestOptions,
  ): Promise<AuditEventPage<AuditTrailVersion>> {
    checkAvailable('auditEvents.list', 'listAuditEvents');
    const { type, ...rest } = query;
    // One type is sent as a list of one, which openapi-fetch sends exploded, as the spec says: `type=a&type=b`.
    const sent = type === undefined ? rest : { ...rest, type: typeof type === 'string' ? [type] : type };
    const { data, response } = await call(requestOptions, (init) =>
      auditHttp.GET('/v1/organizations/audit_events', { params: { query: sent }, ...init }),
    );
    return new AuditEventPage<AuditTrailVersion>(data, {
      query: { ...query },
      requestId: response.headers.get('request-id') ?? undefined,
      fetchPage: (next) => listAuditEvents(next, requestOptions),
    });
  }

  const auditEvents: EveryVersionClient['auditEvents'] = {
    list: listAuditEvents,

    async *listAll(query, requestOptions) {
      yield* await listAuditEvents(query, requestOptions);
    },

    async retrieve(auditEventId, requestOptions) {
      checkAvailable('auditEvents.retrieve', 'getAuditEvent');
      const path = { audit_event_id: checkPathId('auditEventId', auditEventId) };
      const { data } = await call(requestOptions, (init) =>
        auditHttp.GET('/v1/organizations/audit_events/{audit_event_id}', { params: { path }, ...init }),
      );
      return data;
    },
  };

  const client = { apiVersion, apiKeys, auditEvents };
  verifierTransports.set(client, {
    connectTimeoutMs: defaults.timeoutMs,
    // Not through `call`: the stream lasts as long as the subscription, and the feed subscribes again by itself.
    async openKeyChanges(signal) {
      const { data, error, response } = await feedHttp.GET('/v1/keys/changes', {
        parseAs: 'stream',
        headers: { accept: 'text/event-stream' },
        fetch: defaults.fetch,
        signal,
      });
      if (error !== undefined || !response.ok || !data) {
        throw errorFromResponse(response, error);
      }
      return data;
    },
    async reportKeyUsage(uses) {
      const { data } = await call(undefined, (init) => feedHttp.POST('/v1/keys/usage', { body: { uses }, ...init }));
      return data;
    },
  });
  return client;
}

/**
 * Creates a client for a gateway: `keys.verify(secret)` with a verifier key (`sk-vfy-...`; an admin key works too),
 * in the latest API version, with the same transport as `createAdminClient` (retries, timeouts, typed errors) but
 * the gateway's defaults (`VERIFIER_DEFAULTS`): a verification that cannot be answered fails within 2 s. With
 * `cache`, it answers from memory what the change feed lets it (call `close()` when done).
 */
export function createVerifierClient(options: VerifierClientOptions): VerifierClient {
  const { cache, ...clientOptions } = options;
  const cacheOptions = resolveCacheOptions(cache);
  const client = createAdminClient({
    ...clientOptions,
    maxRetries: clientOptions.maxRetries ?? VERIFIER_DEFAULTS.maxRetries,
    timeoutMs: clientOptions.timeoutMs ?? VERIFIER_DEFAULTS.timeoutMs,
    deadlineMs: clientOptions.deadlineMs ?? VERIFIER_DEFAULTS.deadlineMs,
    retryBaseDelayMs: clientOptions.retryBaseDelayMs ?? VERIFIER_DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: clientOptions.retryMaxDelayMs ?? VERIFIER_DEFAULTS.retryMaxDelayMs,
    apiVersion: LATEST_API_VERSION,
  });
  const transport = verifierTransports.get(client);
  if (cacheOptions === undefined || transport === undefined) {
    return {
      apiVersion: client.apiVersion,
      keys: { verify: client.apiKeys.verify },
      cache: undefined,
      close: async () => {},
    };
  }
  const verifier = createCachingVerifier({ ...transport, verify: client.apiKeys.verify }, cacheOptions);
  return {
    apiVersion: client.apiVersion,
    keys: { verify: verifier.verify },
    cache: verifier.cache,
    close: verifier.close,
  };
}
