import type { API_VERSION, ApiVersion } from './generated/spec-facts.js';
import type { VersionTypes } from './generated/versions.js';

export * from './generated/spec-facts.js';
export * from './generated/versions.js';

/** The generated types of one API version. */
type TypesOf<Version extends ApiVersion> = VersionTypes[Version];

/** The paths of an API version, as openapi-typescript types them. */
export type PathsOf<Version extends ApiVersion> = TypesOf<Version>['paths'];
/** The operations of an API version, keyed by operationId. */
export type OperationsOf<Version extends ApiVersion> = TypesOf<Version>['operations'];
/** Every operationId of an API version. */
export type OperationIdOf<Version extends ApiVersion> = keyof OperationsOf<Version> & string;
/** The component schemas of an API version. */
export type SchemasOf<Version extends ApiVersion> = TypesOf<Version>['components']['schemas'];

// The unversioned names describe the first version, as they did when it was the only one.
type First = TypesOf<typeof API_VERSION>;
export type paths = First['paths'];
export type components = First['components'];
export type operations = First['operations'];
type Schemas = components['schemas'];

/** An API key as the first version returns it. */
export type ApiKey = Schemas['ApiKey'];
/** One page of API keys (first version). */
export type ApiKeyList = Schemas['ApiKeyList'];
/** The status of an API key (first version). */
export type ApiKeyStatus = Schemas['ApiKeyStatus'];
/** The actor that created an API key. */
export type CreatedBy = Schemas['CreatedBy'];
/** The body of `updateApiKey` (first version). */
export type UpdateApiKeyRequest = Schemas['UpdateApiKeyRequest'];
/** The shape of every error, the same in every version. */
export type ErrorResponse = Schemas['ErrorResponse'];
/** The kind of an error; each maps to one HTTP status. */
export type ErrorType = Schemas['ErrorType'];
/** Every operationId of the first version. */
export type OperationId = keyof operations;
/** Every operationId of any version. */
export type AnyOperationId = { [Version in ApiVersion]: OperationIdOf<Version> }[ApiVersion];

/** An operation whose `header` parameters are optional, because a client sends them on every request itself. */
type WithClientHeaders<Operation> = Operation extends { parameters: infer Parameters extends { header?: unknown } }
  ? Omit<Operation, 'parameters'> & {
      parameters: Omit<Parameters, 'header'> & { header?: Partial<NonNullable<Parameters['header']>> };
    }
  : Operation;

/**
 * The paths of an API version as seen by a client that sets `vendor-version` (and the admin key) on every request:
 * the same operations, with header parameters optional. Use it with openapi-fetch's `createClient<...>()`.
 */
export type ClientPathsOf<Version extends ApiVersion> = {
  [Path in keyof PathsOf<Version>]: {
    [Key in keyof PathsOf<Version>[Path]]: WithClientHeaders<PathsOf<Version>[Path][Key]>;
  };
};

/** `ClientPathsOf` the first version. */
export type ClientPaths = ClientPathsOf<typeof API_VERSION>;
