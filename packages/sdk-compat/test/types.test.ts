import type {
  APIKeyListParams,
  APIKeyUpdateParams,
  BetaAPIKey,
} from '@anthropic-ai/sdk/resources/beta/organization/api-keys';
import type { OperationsOf, SchemasOf } from '@apikeys/api-types';
import { describe, expectTypeOf, it } from 'vitest';
import type { SDK_API_VERSION } from './support/sdk.js';

// Checked by the compiler (`check-types`); at run time these tests only show up in the report.
type Version = typeof SDK_API_VERSION;
type Schemas = SchemasOf<Version>;
type ListQuery = NonNullable<OperationsOf<Version>['listApiKeys']['parameters']['query']>;
/** The fields of a key this API adds to the SDK's (`last_used_at`; `permissions` and `metadata`). */
type AddedFields = 'last_used_at' | 'permissions' | 'metadata';
/** The SDK's list parameters without the `null` it also allows for each filter (sent as an empty value). */
type NonNullListParams = { [Name in keyof APIKeyListParams]?: Exclude<APIKeyListParams[Name], null> };

describe("the SDK's types against the spec's generated types (2026-10-21)", () => {
  it("BetaAPIKey is exactly the spec's ApiKey without the fields this API adds (the SDK ignores them)", () => {
    expectTypeOf<BetaAPIKey>().toEqualTypeOf<Omit<Schemas['ApiKey'], AddedFields>>();
    expectTypeOf<Schemas['ApiKey']['last_used_at']>().toEqualTypeOf<string | null>();
    expectTypeOf<Schemas['ApiKey']['permissions']>().toEqualTypeOf<string[]>();
  });

  it('every APIKeyUpdateParams is a valid UpdateApiKeyRequest (the SDK has no expires_at to send)', () => {
    expectTypeOf<APIKeyUpdateParams>().toExtend<Schemas['UpdateApiKeyRequest']>();
  });

  it('APIKeyListParams, without null, are exactly the query parameters of listApiKeys but the added filter', () => {
    expectTypeOf<NonNullListParams>().toEqualTypeOf<Omit<ListQuery, 'permission'>>();
  });
});
