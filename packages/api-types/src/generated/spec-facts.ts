/**
 * This file was generated from spec/openapi.yaml by scripts/generate-spec-facts.ts.
 * Do not make direct changes to the file.
 */

import type { components } from './openapi.js';

type Schemas = components['schemas'];

/** `info.version`: the API version this document describes, which a client built on these types sends. */
export const API_VERSION = "2023-06-01" satisfies components['parameters']['VendorVersion'];

/** Every value the `vendor-version` header accepts (`components.parameters.VendorVersion`), oldest first. */
export const API_VERSIONS = ["2023-06-01"] as const satisfies readonly components['parameters']['VendorVersion'][];

/** Every API key status (`ApiKeyStatus`), in the order the spec lists them. */
export const API_KEY_STATUSES = ["active","inactive","archived"] as const satisfies readonly Schemas['ApiKeyStatus'][];

/** The bounds and the default of the `limit` query parameter (`components.parameters.Limit`). */
export const LIST_LIMIT = {"minimum":1,"maximum":1000,"default":20} as const;

/** The length of an API key name, in Unicode code points (`UpdateApiKeyRequest.name`, `ApiKey.name`). */
export const API_KEY_NAME_LENGTH = {"minimum":1,"maximum":500} as const;

/** The largest request body the server reads, in bytes (`x-max-request-body-bytes`). */
export const MAX_REQUEST_BODY_BYTES = 1048576;

/** The HTTP status of each error type (`ErrorType.x-http-status`). */
export const ERROR_STATUSES = {"invalid_request_error":400,"authentication_error":401,"permission_error":403,"not_found_error":404,"request_too_large":413,"rate_limit_error":429,"api_error":500,"service_unavailable_error":503} as const satisfies Record<Schemas['ErrorType'], number>;

/** For each operation, the query parameters with a default in the spec, which the request validator fills in. */
export interface QueryParameterDefaults {
  listApiKeys: "limit";
}
