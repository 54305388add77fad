import type { components, operations, paths } from './generated/openapi.js';

export * from './generated/spec-facts.js';
export type { components, operations, paths };

type Schemas = components['schemas'];

/** An API key as the API returns it. */
export type ApiKey = Schemas['ApiKey'];
/** One page of API keys. */
export type ApiKeyList = Schemas['ApiKeyList'];
/** The status of an API key. */
export type ApiKeyStatus = Schemas['ApiKeyStatus'];
/** The actor that created an API key. */
export type CreatedBy = Schemas['CreatedBy'];
/** The body of `updateApiKey`. */
export type UpdateApiKeyRequest = Schemas['UpdateApiKeyRequest'];
/** The shape of every error body. */
export type ErrorResponse = Schemas['ErrorResponse'];
/** The kind of an error; each maps to one HTTP status. */
export type ErrorType = Schemas['ErrorType'];
/** A value of the `vendor-version` header. */
export type ApiVersion = components['parameters']['VendorVersion'];
/** Every operationId in the spec. */
export type OperationId = keyof operations;

/** An operation whose `header` parameters are optional, because a client sends them on every request itself. */
type WithClientHeaders<Operation> = Operation extends { parameters: infer Parameters extends { header?: unknown } }
  ? Omit<Operation, 'parameters'> & {
      parameters: Omit<Parameters, 'header'> & { header?: Partial<NonNullable<Parameters['header']>> };
    }
  : Operation;

/**
 * `paths` as seen by a client that sets `vendor-version` (and `x-api-key`) on every request: the same operations,
 * with header parameters optional. Use it with openapi-fetch's `createClient<ClientPaths>()`.
 */
export type ClientPaths = {
  [Path in keyof paths]: { [Key in keyof paths[Path]]: WithClientHeaders<paths[Path][Key]> };
};
