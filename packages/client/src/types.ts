import type { ApiVersion, LATEST_API_VERSION, OperationIdOf, OperationsOf, SchemasOf } from '@apikeys/api-types';

export type { ApiVersion, ErrorResponse, ErrorType } from '@apikeys/api-types';

// Every type below is generic over the API version and, like the client, describes the latest version unless told
// otherwise: `ApiKey` is a key of v2026_10_21, `ApiKey<typeof API_VERSION>` one of the first version. (The
// unversioned names of @apikeys/api-types describe the first version instead.) A union of versions gives what every
// one of them has.

/** The latest API version, which a client speaks unless told otherwise. */
export type LatestApiVersion = typeof LATEST_API_VERSION;

/** The API versions that have an operation (every one of a union): the version that introduced it and later ones. */
export type VersionWith<OperationId extends string> = {
  [Version in ApiVersion]: [OperationId] extends [OperationIdOf<Version>] ? Version : never;
}[ApiVersion];

/** An operation of a version, or `never` where the version does not have it. */
type OperationOf<Version extends ApiVersion, OperationId extends string> =
  OperationId extends OperationIdOf<Version> ? OperationsOf<Version>[OperationId] : never;

/** The JSON body an operation takes. */
type JsonBodyOf<Operation> = Operation extends { requestBody?: { content: { 'application/json': infer Body } } }
  ? Body
  : never;

/** The JSON body of an operation's `200`. */
type JsonResultOf<Operation> = Operation extends {
  responses: { 200: { content: { 'application/json': infer Result } } };
}
  ? Result
  : never;

/** The JSON body an operation of a version takes. */
type BodyOf<Version extends ApiVersion, OperationId extends string> = JsonBodyOf<OperationOf<Version, OperationId>>;
/** The JSON body of a `200` from an operation of a version. */
type ResultOf<Version extends ApiVersion, OperationId extends string> = JsonResultOf<OperationOf<Version, OperationId>>;

/** An API key. */
export type ApiKey<Version extends ApiVersion = LatestApiVersion> = SchemasOf<Version>['ApiKey'];
/** One page of API keys, as `listApiKeys` returns it. */
export type ApiKeyList<Version extends ApiVersion = LatestApiVersion> = SchemasOf<Version>['ApiKeyList'];
/** The status of an API key (`expired` from v2026_10_21). */
export type ApiKeyStatus<Version extends ApiVersion = LatestApiVersion> = SchemasOf<Version>['ApiKeyStatus'];
/** The actor that created an API key. */
export type CreatedBy<Version extends ApiVersion = LatestApiVersion> = SchemasOf<Version>['CreatedBy'];
/** The body of `updateApiKey`, as the spec names it. */
export type UpdateApiKeyRequest<Version extends ApiVersion = LatestApiVersion> =
  SchemasOf<Version>['UpdateApiKeyRequest'];

/** The query of `listApiKeys`: cursors (`before_id` or `after_id`), `limit` and filters. */
export type ListApiKeysQuery<Version extends ApiVersion = LatestApiVersion> = NonNullable<
  OperationOf<Version, 'listApiKeys'>['parameters']['query']
>;
/** The filters of `listApiKeys`, which every page of a walk sends again. */
export type ListApiKeysFilters<Version extends ApiVersion = LatestApiVersion> = Omit<
  ListApiKeysQuery<Version>,
  'before_id' | 'after_id'
>;
/** The body of a `200` from `listApiKeys`: one page of keys. */
export type ListApiKeysResponse<Version extends ApiVersion = LatestApiVersion> = ResultOf<Version, 'listApiKeys'>;

/** The ID of an API key, as the `api_key_id` path parameter takes it (the same in every version). */
export type ApiKeyId = OperationOf<ApiVersion, 'getApiKey'>['parameters']['path']['api_key_id'];
/** The body of a `200` from `getApiKey`. */
export type GetApiKeyResponse<Version extends ApiVersion = LatestApiVersion> = ResultOf<Version, 'getApiKey'>;

/**
 * The body `updateApiKey` takes: each field omitted (unchanged) or set; `status` (and from v2026_10_21 `name`) may be
 * `null` (unchanged); from v2026_10_21, `expires_at` sets the expiry, or removes it with `null`.
 */
export type UpdateApiKeyBody<Version extends ApiVersion = LatestApiVersion> = BodyOf<Version, 'updateApiKey'>;
/** The body of a `200` from `updateApiKey`: the key as updated. */
export type UpdateApiKeyResponse<Version extends ApiVersion = LatestApiVersion> = ResultOf<Version, 'updateApiKey'>;

/** The body `createApiKey` takes (v2026_10_21 on): `name`, and optionally `workspace_id`, `expires_at`, `principal`. */
export type CreateApiKeyBody<Version extends VersionWith<'createApiKey'> = LatestApiVersion> = BodyOf<
  Version,
  'createApiKey'
>;
/** The body of a `200` from `createApiKey`: the new key, with its secret in `key` (shown this once). */
export type CreatedApiKey<Version extends VersionWith<'createApiKey'> = LatestApiVersion> = ResultOf<
  Version,
  'createApiKey'
>;

/**
 * The body `rotateApiKey` takes (from v2026_10_21): `grace_period_seconds`, which may be omitted. `Partial` because
 * openapi-typescript makes a property with a default required (its `defaultNonNullable`), which holds for the
 * responses the server fills in, not for a request, where the server applies the default.
 */
export type RotateApiKeyBody<Version extends VersionWith<'rotateApiKey'> = LatestApiVersion> = Partial<
  BodyOf<Version, 'rotateApiKey'>
>;
/** The body of a `200` from `rotateApiKey`: the new key with its secret in `key`, and `rotated_api_key`, the old. */
export type RotatedApiKey<Version extends VersionWith<'rotateApiKey'> = LatestApiVersion> = ResultOf<
  Version,
  'rotateApiKey'
>;

/** The body of a `200` from `verifyApiKey` (v2026_10_21 on): `valid`, `code`, and the key when it was found. */
export type KeyVerification<Version extends VersionWith<'verifyApiKey'> = LatestApiVersion> = ResultOf<
  Version,
  'verifyApiKey'
>;
/** Why a secret is or is not valid: `VALID`, `NOT_FOUND`, `INACTIVE`, `ARCHIVED` or `EXPIRED`. */
export type VerificationCode<Version extends VersionWith<'verifyApiKey'> = LatestApiVersion> =
  KeyVerification<Version>['code'];

/** One event of the change feed (`streamKeyChanges`, v2026_10_21 on); `type` says which. */
export type KeyChangeFeedEvent<Version extends VersionWith<'streamKeyChanges'> = LatestApiVersion> =
  SchemasOf<Version>['KeyChangeFeedEvent'];
/** A key and when a gateway last found it valid from its memory, as `reportKeyUsage` takes it (v2026_10_21 on). */
export type KeyUse<Version extends VersionWith<'reportKeyUsage'> = LatestApiVersion> = SchemasOf<Version>['KeyUse'];

/** An audit event (v2026_10_21 on): one change to a key, an admin key or the organization. */
export type AuditEvent<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> = ResultOf<
  Version,
  'getAuditEvent'
>;
/** One page of audit events, as `listAuditEvents` returns it. */
export type ListAuditEventsResponse<Version extends VersionWith<'listAuditEvents'> = LatestApiVersion> = ResultOf<
  Version,
  'listAuditEvents'
>;
/** What an audit event records: `api_key.created`, `api_key.updated`, ... */
export type AuditEventType<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> =
  AuditEvent<Version>['type'];
/** Who made a change: an admin key through the API, or an operator through the CLI. */
export type AuditActor<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> = AuditEvent<Version>['actor'];
/** What a change was about. */
export type AuditTarget<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> =
  AuditEvent<Version>['target'];
/** The fields a change changed, each with its value before and after. */
export type AuditChanges<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> =
  AuditEvent<Version>['changes'];
/** The HTTP client of the request that made a change; `null` for the operator CLI. */
export type AuditClient<Version extends VersionWith<'getAuditEvent'> = LatestApiVersion> = NonNullable<
  AuditEvent<Version>['client']
>;
/** The ID of an audit event, as the `audit_event_id` path parameter takes it. */
export type AuditEventId = OperationOf<
  VersionWith<'getAuditEvent'>,
  'getAuditEvent'
>['parameters']['path']['audit_event_id'];

/** The query of `listAuditEvents` as the API takes it, `type` a list. */
type ListAuditEventsParameters<Version extends VersionWith<'listAuditEvents'>> = NonNullable<
  OperationOf<Version, 'listAuditEvents'>['parameters']['query']
>;
/**
 * The query `auditEvents.list` takes: cursors (`before_id` or `after_id`), `limit` and the filters of
 * `listAuditEvents` (`target_id`, `actor_id`, `type`, `occurred_after`, `occurred_before`), except that `type` may be
 * one type as well as a list of them (sent as `type=a&type=b`).
 */
export type ListAuditEventsQuery<Version extends VersionWith<'listAuditEvents'> = LatestApiVersion> = Omit<
  ListAuditEventsParameters<Version>,
  'type'
> & {
  type?: ListAuditEventsParameters<Version>['type'] | NonNullable<ListAuditEventsParameters<Version>['type']>[number];
};
/** The filters of `listAuditEvents`, which every page of a walk sends again. */
export type ListAuditEventsFilters<Version extends VersionWith<'listAuditEvents'> = LatestApiVersion> = Omit<
  ListAuditEventsQuery<Version>,
  'before_id' | 'after_id'
>;
