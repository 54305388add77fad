import { loadSpec } from '@apikeys/spec';
import { breakingChanges } from '@apikeys/spec/compatibility';
import { describe, expect, it } from 'vitest';
import { LATEST_API_VERSION } from '../src/index.js';

// biome-ignore lint/suspicious/noExplicitAny: a test edits parts of a parsed document that no type describes.
type Document = any;

const published: Document = loadSpec(LATEST_API_VERSION);

/** The breaking changes from the latest version's document to a copy of it that `edit` changed. */
function changesAfter(edit: (document: Document) => void) {
  const current = structuredClone(published);
  edit(current);
  return breakingChanges(published, current);
}

const schemas = (document: Document) => document.components.schemas;
const GET_KEY = 'GET /v1/organizations/api_keys/{api_key_id}';
const UPDATE_KEY = 'POST /v1/organizations/api_keys/{api_key_id}';
const UPDATE_BODY = `${UPDATE_KEY} request body (application/json)`;
const VERIFY = 'POST /v1/keys/verify';
const DATE_TIME_INPUT: string = schemas(published).DateTimeInput.pattern;

describe('breakingChanges: what the versioning policy forbids is caught', () => {
  it.each([
    [
      'a removed response field',
      (document: Document) => {
        delete schemas(document).ApiKey.properties.name;
      },
      { where: `${GET_KEY} response 200 body (application/json).name`, change: 'removed' },
    ],
    [
      'a retyped response field',
      (document: Document) => {
        schemas(document).ApiKey.properties.partial_key_hint.type = ['integer', 'null'];
      },
      { where: `${GET_KEY} response 200 body (application/json).partial_key_hint`, change: 'may now be integer' },
    ],
    [
      'a retyped request field',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.name.type = ['integer', 'null'];
      },
      { where: `${UPDATE_BODY}.name`, change: 'no longer accepts string' },
    ],
    [
      'a new required request field',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.reason = { type: 'string' };
        schemas(document).UpdateApiKeyRequest.required = ['reason'];
      },
      { where: `${UPDATE_BODY}.reason`, change: 'now required' },
    ],
    [
      'an optional request field made required',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.required = ['name'];
      },
      { where: `${UPDATE_BODY}.name`, change: 'now required' },
    ],
    [
      'a removed operation',
      (document: Document) => {
        delete document.paths['/v1/organizations/api_keys/{api_key_id}/rotate'];
      },
      { where: 'POST /v1/organizations/api_keys/{api_key_id}/rotate', change: 'removed' },
    ],
    [
      'a narrowed enum in a request',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.status.enum = ['active', 'inactive', null];
      },
      { where: `${UPDATE_BODY}.status`, change: 'no longer accepts "archived": only "active", "inactive"' },
    ],
    [
      'a narrowed range of a query parameter',
      (document: Document) => {
        document.components.parameters.Limit.schema.maximum = 100;
      },
      { where: 'GET /v1/organizations/api_keys parameter query limit', change: 'maximum changed from 1000 to 100' },
    ],
    [
      'a narrowed range of a request field',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.name.maxLength = 100;
      },
      { where: `${UPDATE_BODY}.name`, change: 'maxLength changed from 500 to 100' },
    ],
    [
      'a removed status',
      (document: Document) => {
        delete document.paths['/v1/organizations/api_keys/{api_key_id}'].get.responses['404'];
      },
      { where: `${GET_KEY} response 404`, change: 'status removed' },
    ],
    [
      'a new enum value in a response',
      (document: Document) => {
        schemas(document).ApiKeyStatus.enum.push('revoked');
      },
      {
        where: `${GET_KEY} response 200 body (application/json).status`,
        change: 'may now hold "revoked", beyond "active", "inactive", "archived", "expired"',
      },
    ],
    [
      'a response field that may now be null',
      (document: Document) => {
        schemas(document).ApiKey.properties.name.type = ['string', 'null'];
      },
      { where: `${GET_KEY} response 200 body (application/json).name`, change: 'may now be null' },
    ],
    [
      'a response field that may now be missing',
      (document: Document) => {
        schemas(document).ApiKey.required = schemas(document).ApiKey.required.filter((name: string) => name !== 'id');
      },
      {
        where: `${GET_KEY} response 200 body (application/json).id`,
        change: 'may now be missing (no longer required)',
      },
    ],
    [
      'a removed query parameter',
      (document: Document) => {
        const list = document.paths['/v1/organizations/api_keys'].get;
        list.parameters = list.parameters.filter(({ $ref }: { $ref: string }) => !$ref.endsWith('/StatusFilter'));
      },
      { where: 'GET /v1/organizations/api_keys parameter query status', change: 'removed' },
    ],
    [
      'a new required query parameter',
      (document: Document) => {
        const list = document.paths['/v1/organizations/api_keys'].get;
        list.parameters.push({ name: 'sort', in: 'query', required: true, schema: { type: 'string' } });
      },
      { where: 'GET /v1/organizations/api_keys parameter query sort', change: 'a new required parameter' },
    ],
    [
      'a changed default',
      (document: Document) => {
        document.components.parameters.Limit.schema.default = 50;
      },
      { where: 'GET /v1/organizations/api_keys parameter query limit', change: 'default changed from 20 to 50' },
    ],
    [
      'a removed response header',
      (document: Document) => {
        delete document.components.responses.RateLimited.headers['retry-after'];
      },
      { where: `${GET_KEY} response 429 header retry-after`, change: 'removed' },
    ],
    [
      'a credential no longer accepted',
      (document: Document) => {
        document.security = [{ AdminKey: [] }];
      },
      { where: GET_KEY, change: 'no longer accepts AdminBearer' },
    ],
    [
      'a changed extension (a narrower expiry range)',
      (document: Document) => {
        schemas(document).ExpiresAt['x-latest'] = '2099-12-31T23:59:59.999999Z';
      },
      {
        where: `${UPDATE_BODY}.expires_at`,
        change: 'x-latest changed from "2199-12-31T23:59:59.999999Z" to "2099-12-31T23:59:59.999999Z"',
      },
    ],
    [
      'an operation no longer counted against the rate limit',
      (document: Document) => {
        document.paths['/v1/organizations/api_keys/{api_key_id}'].get['x-rate-limited'] = false;
      },
      { where: GET_KEY, change: 'x-rate-limited changed from none to false' },
    ],
    [
      'a new response value whose opt-in input was already published',
      (document: Document) => {
        schemas(document).VerificationCode.enum.push('REVOKED');
        schemas(document).VerificationCode['x-opt-in-values'].REVOKED = 'VerifyApiKeyRequest.key';
      },
      {
        where: `${VERIFY} response 200 body (application/json).code`,
        change: expect.stringMatching(/^may now hold "REVOKED", beyond "VALID"/),
      },
    ],
    [
      'an opt-in value moved to another input',
      (document: Document) => {
        schemas(document).VerificationCode['x-opt-in-values'].INSUFFICIENT_PERMISSIONS = 'VerifyApiKeyRequest.scopes';
      },
      {
        where: `${VERIFY} response 200 body (application/json).code`,
        change: expect.stringMatching(/^x-opt-in-values changed from/),
      },
    ],
    [
      'a narrowed pattern of a request field (at most 3 fractional digits, where 6 were accepted)',
      (document: Document) => {
        schemas(document).DateTimeInput.pattern = DATE_TIME_INPUT.replace('{1,6}', '{1,3}');
      },
      {
        where: `${UPDATE_BODY}.expires_at`,
        change: `pattern changed from ${JSON.stringify(DATE_TIME_INPUT)} to ${JSON.stringify(
          DATE_TIME_INPUT.replace('{1,6}', '{1,3}'),
        )}`,
      },
    ],
    [
      'a request pattern that may be wider but cannot be proven so (a lookahead)',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.name.pattern = '^(?![^]*\\u0000)[^]*$';
      },
      { where: `${UPDATE_BODY}.name`, change: expect.stringMatching(/^pattern changed from/) },
    ],
    [
      'a response pattern that may now produce more',
      (document: Document) => {
        schemas(document).ApiKey.properties.id.pattern = '^apikey_[A-Za-z0-9]{24,32}$';
      },
      {
        where: `${GET_KEY} response 200 body (application/json).id`,
        change: 'pattern changed from "^apikey_[A-Za-z0-9]{24}$" to "^apikey_[A-Za-z0-9]{24,32}$"',
      },
    ],
  ])('catches %s', (_, edit, expected) => {
    expect(changesAfter(edit)).toContainEqual(expected);
  });
});

describe('breakingChanges: what the versioning policy allows passes', () => {
  it('finds nothing between a document and itself', () => {
    expect(breakingChanges(published, loadSpec(LATEST_API_VERSION))).toEqual([]);
  });

  it.each([
    [
      'a new optional request field',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.note = { type: 'string', maxLength: 100 };
      },
    ],
    [
      'a new response field',
      (document: Document) => {
        schemas(document).ApiKey.properties.rotated_at = { type: ['string', 'null'] };
        schemas(document).ApiKey.required.push('rotated_at');
      },
    ],
    [
      'a new operation',
      (document: Document) => {
        document.paths['/v1/organizations/api_keys/{api_key_id}/revoke'] = {
          post: { operationId: 'revokeApiKey', responses: { '200': { description: 'The key, revoked.' } } },
        };
      },
    ],
    [
      'edited descriptions, summaries and examples',
      (document: Document) => {
        document.info.description = 'Reworded.';
        schemas(document).ApiKey.description = 'Reworded.';
        schemas(document).ApiKey.properties.name.description = 'Reworded.';
        document.paths['/v1/organizations/api_keys'].get.summary = 'Reworded';
        document.components.responses.NotFound.content['application/json'].examples = {};
      },
    ],
    [
      'a new optional query parameter',
      (document: Document) => {
        const list = document.paths['/v1/organizations/api_keys'].get;
        list.parameters.push({ name: 'name_prefix', in: 'query', required: false, schema: { type: 'string' } });
      },
    ],
    [
      'a wider range and a new enum value in a request',
      (document: Document) => {
        document.components.parameters.Limit.schema.maximum = 5000;
        schemas(document).UpdateApiKeyRequest.properties.name.maxLength = 1000;
        schemas(document).UpdateApiKeyRequest.properties.status.enum.push('paused');
      },
    ],
    [
      'a new optional response header',
      (document: Document) => {
        document.paths['/v1/organizations/api_keys'].get.responses['200'].headers.deprecation = {
          required: false,
          schema: { type: 'string' },
        };
      },
    ],
    [
      'a new error status',
      (document: Document) => {
        document.paths['/v1/organizations/api_keys/{api_key_id}'].post.responses['409'] = {
          $ref: '#/components/responses/InvalidRequest',
        };
      },
    ],
    [
      'an operation that now counts against the rate limit (it documents 429)',
      (document: Document) => {
        delete document.paths['/v1/keys/verify'].post['x-rate-limited'];
      },
    ],
    [
      'a new response value that answers only a new optional input (x-opt-in-values)',
      (document: Document) => {
        schemas(document).VerifyApiKeyRequest.properties.revocations = { type: 'boolean' };
        schemas(document).VerificationCode.enum.push('REVOKED');
        schemas(document).VerificationCode['x-opt-in-values'].REVOKED = 'VerifyApiKeyRequest.revocations';
      },
    ],
    [
      'a request pattern proven to accept more (9 fractional digits, lower-case t and z)',
      (document: Document) => {
        schemas(document).DateTimeInput.pattern =
          '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2})$';
      },
    ],
    [
      'a request pattern rewritten to accept the same strings',
      (document: Document) => {
        schemas(document).UpdateApiKeyRequest.properties.name.pattern = '^(?:[^\\u0000])*$|^$';
      },
    ],
    [
      'a response pattern proven to produce less',
      (document: Document) => {
        schemas(document).ApiKey.properties.id.pattern = '^apikey_[0-9A-Z]{24}$';
      },
    ],
  ])('allows %s', (_, edit) => {
    expect(changesAfter(edit)).toEqual([]);
  });

  it('allows a request field that took six fractional digits in UTC to take every DateTimeInput', () => {
    // As `KeyUse.used_at` did: published as an output `Timestamp`, now a `DateTimeInput`.
    const timestampOnly = structuredClone(published);
    schemas(timestampOnly).DateTimeInput.pattern = schemas(published).Timestamp.pattern;

    expect(breakingChanges(timestampOnly, published)).toEqual([]);
    expect(breakingChanges(published, timestampOnly)).toContainEqual({
      where: `${UPDATE_BODY}.expires_at`,
      change: expect.stringMatching(/^pattern changed from/),
    });
  });
});
