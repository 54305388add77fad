/**
 * This file was generated from spec/openapi.yaml by scripts/generate-spec-facts.ts.
 * Do not make direct changes to the file.
 */

import type { VersionTypes } from './versions.js';

/** An API version: a value of the `vendor-version` header. */
export type ApiVersion = keyof VersionTypes;

type StatusOf<Version extends ApiVersion> = VersionTypes[Version]['components']['schemas']['ApiKeyStatus'];

/** Every API version, oldest first (`x-api-versions`); each has a document and types of its own. */
export const API_VERSIONS = ["2023-06-01","2026-10-21"] as const satisfies readonly ApiVersion[];

/** The first API version. The unversioned types (`paths`, `components`, `ApiKey`, ...) describe it. */
export const API_VERSION = "2023-06-01" satisfies ApiVersion;

/** The latest API version, which a client sends unless told otherwise. */
export const LATEST_API_VERSION = "2026-10-21" satisfies ApiVersion;

/** For each operation, the version that introduced it; a request of an earlier version cannot call it. */
export const OPERATION_INTRODUCED_IN = {"listApiKeys":"2023-06-01","getApiKey":"2023-06-01","updateApiKey":"2023-06-01","getHealth":"2023-06-01","getReadiness":"2023-06-01","createApiKey":"2026-10-21","rotateApiKey":"2026-10-21","listAuditEvents":"2026-10-21","getAuditEvent":"2026-10-21","verifyApiKey":"2026-10-21","streamKeyChanges":"2026-10-21","reportKeyUsage":"2026-10-21"} as const satisfies Record<
  string,
  ApiVersion
>;

/** Every API key status (`ApiKeyStatus`) of the first version, in the order the spec lists them. */
export const API_KEY_STATUSES = ["active","inactive","archived"] as const satisfies readonly StatusOf<
  typeof API_VERSION
>[];

/** Every API key status (`ApiKeyStatus`) of each version, in the order the spec lists them. */
export const API_KEY_STATUSES_BY_VERSION = {"2023-06-01":["active","inactive","archived"],"2026-10-21":["active","inactive","archived","expired"]} as const satisfies {
  [Version in ApiVersion]: readonly StatusOf<Version>[];
};

/** The bounds and the default of the `limit` query parameter (`components.parameters.Limit`). */
export const LIST_LIMIT = {"minimum":1,"maximum":1000,"default":20} as const;

/** The length of an API key name, in Unicode code points (`UpdateApiKeyRequest.name`, `ApiKey.name`). */
export const API_KEY_NAME_LENGTH = {"minimum":1,"maximum":500} as const;

/**
 * The bounds and the default of a rotation's grace period, in seconds (`RotateApiKeyRequest.grace_period_seconds`,
 * the same in every version that has `rotateApiKey`).
 */
export const ROTATION_GRACE_PERIOD_SECONDS = {"minimum":0,"maximum":604800,"default":0} as const;

/**
 * The latest expiry a create or an update may set, in UTC with microseconds (`ExpiresAt.x-latest`, the same in every
 * version that has expiries): every instant up to it is held exactly as microseconds in a JavaScript number.
 */
export const LATEST_EXPIRY = "2199-12-31T23:59:59.999999Z";

/** The largest request body the server reads, in bytes (`x-max-request-body-bytes`). */
export const MAX_REQUEST_BODY_BYTES = 1048576;

/**
 * The change feed's bounds (`streamKeyChanges`): a heartbeat is sent every `heartbeatIntervalMs`
 * (`x-heartbeat-interval-ms`), and a subscriber with more than `maxUnreadBytes` of events unread is dropped
 * (`x-max-unread-bytes`).
 */
export const CHANGE_FEED = {"heartbeatIntervalMs":2000,"maxUnreadBytes":65536} as const;

/**
 * A gateway's report of key uses (`reportKeyUsage`): at most `maxUses` uses (`KeyUsageReport.uses.maxItems`),
 * counted against the caller's rate limit as one request per `usesPerRequest` uses (`x-uses-per-request`).
 */
export const KEY_USAGE_REPORT = {"maxUses":1000,"usesPerRequest":100} as const;

/**
 * A key's permissions (`Permissions`, `PermissionName`): at most `maxItems` distinct names, each at most
 * `nameMaxLength` characters and matching `namePattern`.
 */
export const PERMISSIONS = {"maxItems":100,"nameMaxLength":128,"namePattern":"^(?:\\*|[a-z0-9_-]+(?:\\.[a-z0-9_-]+)*(?:\\.\\*)?)$"} as const;

/**
 * A permission requirement (`PermissionQuery`): at most `maxLength` characters, `maxNesting` levels of
 * parentheses.
 */
export const PERMISSION_QUERY = {"maxLength":1000,"maxNesting":8} as const;

/**
 * A key's metadata (`KeyMetadata`): at most `maxSerializedBytes` bytes as compact UTF-8 JSON
 * (`x-max-serialized-bytes`), at most `maxDepth` levels deep, the object itself the first (`x-max-depth`).
 */
export const KEY_METADATA = {"maxSerializedBytes":4096,"maxDepth":5} as const;

/** The HTTP status of each error type (`ErrorType.x-http-status`). */
export const ERROR_STATUSES = {"invalid_request_error":400,"authentication_error":401,"permission_error":403,"not_found_error":404,"request_too_large":413,"rate_limit_error":429,"api_error":500,"service_unavailable_error":503} as const satisfies Record<
  VersionTypes[ApiVersion]['components']['schemas']['ErrorType'],
  number
>;

/**
 * For each operation of any version, the query parameters with a default in the spec, which the request validator
 * fills in.
 */
export interface QueryParameterDefaults {
  listApiKeys: "limit";
  listAuditEvents: "limit";
}
