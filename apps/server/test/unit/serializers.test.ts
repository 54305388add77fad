import { specErrors } from '@apikeys/server/testing';
import { type ApiKeyRecord, nowMicros } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import { toApiKeyJson } from '../../src/http/serializers/api-key.js';
import { toApiKeyListJson } from '../../src/http/serializers/api-key-list.js';

/** 2024-10-30T23:58:27.427722Z in microseconds. */
const CREATED_AT = 1_730_332_707_427_722;

function record(id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id,
    name: 'Production backend',
    workspaceId: 'wrkspc_01HZX3Q8K2M4N6P8R0T2',
    createdAt: CREATED_AT,
    createdBy: { id: 'user_01HZX3Q8K2M4N6P8R0T2V4W6', type: 'user' },
    partialKeyHint: 'sk-api-Ab3d...wXyZ',
    status: 'active',
    ...overrides,
  };
}

describe('toApiKeyJson', () => {
  it("renders a record as the spec's ApiKey, with created_at in RFC 3339 at microsecond precision", () => {
    const json = toApiKeyJson(record('apikey_01HZX3Q8K2M4N6P8R0T2V4W6'), nowMicros());

    expect(json).toEqual({
      id: 'apikey_01HZX3Q8K2M4N6P8R0T2V4W6',
      type: 'api_key',
      name: 'Production backend',
      workspace_id: 'wrkspc_01HZX3Q8K2M4N6P8R0T2',
      created_at: '2024-10-30T23:58:27.427722Z',
      created_by: { id: 'user_01HZX3Q8K2M4N6P8R0T2V4W6', type: 'user' },
      partial_key_hint: 'sk-api-Ab3d...wXyZ',
      status: 'active',
    });
    expect(specErrors('getApiKey', 200, json)).toEqual([]);
  });

  it('keeps null for the default workspace and for a key without a hint', () => {
    const json = toApiKeyJson(
      record('apikey_01HZX3Q8K2M4N6P8R0T2V4W6', { workspaceId: null, partialKeyHint: null }),
      nowMicros(),
    );

    expect(json).toMatchObject({ workspace_id: null, partial_key_hint: null });
    expect(specErrors('getApiKey', 200, json)).toEqual([]);
  });
});

describe('toApiKeyListJson', () => {
  it('names the first and the last key of the page, and says whether more follow', () => {
    const keys = [
      'apikey_AAAAAAAAAAAAAAAAAAAAAAA3',
      'apikey_AAAAAAAAAAAAAAAAAAAAAAA2',
      'apikey_AAAAAAAAAAAAAAAAAAAAAAA1',
    ];

    const json = toApiKeyListJson({ keys: keys.map((id) => record(id)), hasMore: true }, nowMicros());

    expect(json.data.map((key) => key.id)).toEqual(keys);
    expect(json).toMatchObject({ has_more: true, first_id: keys[0], last_id: keys[2] });
    expect(specErrors('listApiKeys', 200, json)).toEqual([]);
  });

  it('gives null first_id and last_id on an empty page', () => {
    expect(toApiKeyListJson({ keys: [], hasMore: false }, nowMicros())).toEqual({
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });
});
