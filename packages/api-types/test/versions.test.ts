import { loadSource, loadSpec, specVersions } from '@apikeys/spec';
import { deriveVersion } from '@apikeys/spec/versions';
import { describe, expect, it } from 'vitest';
import { API_VERSIONS, LATEST_API_VERSION, OPERATION_INTRODUCED_IN } from '../src/index.js';

type Json = Parameters<typeof deriveVersion>[0];

/** A small source with two versions, to see each annotation at work. */
function source(extra: Json = {}): Json {
  return {
    openapi: '3.1.0',
    'x-api-versions': ['2020-01-01', '2021-01-01'],
    paths: {},
    components: {
      schemas: {
        Thing: {
          type: 'object',
          required: ['old', 'new', 'both'],
          properties: {
            old: { type: 'string', 'x-removed-in': '2021-01-01' },
            new: { type: 'string', 'x-since': '2021-01-01' },
            both: { type: 'string', enum: ['a', 'b'], 'x-versions': { '2020-01-01': { enum: ['a'] } } },
          },
        },
      },
    },
    ...extra,
  };
}

describe('deriving the document of a version', () => {
  it('keeps what exists in the version, patches what differs, and drops required names of dropped properties', () => {
    const first = deriveVersion(source(), '2020-01-01') as { components: { schemas: { Thing: unknown } } };
    const second = deriveVersion(source(), '2021-01-01') as { components: { schemas: { Thing: unknown } } };

    expect(first.components.schemas.Thing).toEqual({
      type: 'object',
      required: ['old', 'both'],
      properties: { old: { type: 'string' }, both: { type: 'string', enum: ['a'] } },
    });
    expect(second.components.schemas.Thing).toEqual({
      type: 'object',
      required: ['new', 'both'],
      properties: { new: { type: 'string' }, both: { type: 'string', enum: ['a', 'b'] } },
    });
  });

  it('removes the annotations from every document', () => {
    for (const version of specVersions()) {
      const text = JSON.stringify(loadSpec(version));
      for (const annotation of ['x-since', 'x-removed-in', 'x-versions', 'x-extends', 'x-api-versions']) {
        expect(text).not.toContain(`"${annotation}"`);
      }
    }
  });

  it('drops references to a node the version does not have from lists, and refuses them elsewhere', () => {
    const withList = source({
      paths: {
        '/x': {
          get: {
            'x-since': '2021-01-01',
            parameters: [{ $ref: '#/components/parameters/P' }],
          },
          post: { parameters: [{ $ref: '#/components/parameters/P' }] },
        },
      },
    });
    (withList as { components: Record<string, unknown> }).components.parameters = {
      P: { 'x-since': '2021-01-01', name: 'p', in: 'query' },
    };
    const first = deriveVersion(withList, '2020-01-01') as { paths: Record<string, Record<string, unknown>> };
    expect(first.paths['/x']).toEqual({ post: { parameters: [] } });

    const broken = source();
    (broken as { components: { schemas: Record<string, unknown> } }).components.schemas.User = {
      $ref: '#/components/schemas/Gone',
    };
    expect(() => deriveVersion(broken, '2020-01-01')).toThrow(/Gone/);
  });

  it('expands x-extends into the referenced schema and its own properties', () => {
    const extended = source();
    (extended as { components: { schemas: Record<string, unknown> } }).components.schemas.More = {
      'x-extends': '#/components/schemas/Thing',
      type: 'object',
      required: ['extra'],
      properties: { extra: { type: 'integer' } },
    };

    const first = deriveVersion(extended, '2020-01-01') as { components: { schemas: Record<string, unknown> } };

    expect(first.components.schemas.More).toEqual({
      type: 'object',
      required: ['old', 'both', 'extra'],
      properties: { old: { type: 'string' }, both: { type: 'string', enum: ['a'] }, extra: { type: 'integer' } },
    });
  });

  it('refuses a version the source does not declare', () => {
    expect(() => deriveVersion(source(), '2019-01-01')).toThrow(/x-api-versions/);
    expect(() => deriveVersion(source({ x: { 'x-since': '2022-01-01' } }), '2020-01-01')).toThrow(/2022-01-01/);
  });
});

describe('the versions of this API', () => {
  it('are those the source declares, and each operation names the version that introduced it', () => {
    expect(API_VERSIONS).toEqual(loadSource()['x-api-versions']);
    expect(LATEST_API_VERSION).toBe(API_VERSIONS.at(-1));
    expect(OPERATION_INTRODUCED_IN).toMatchObject({
      listApiKeys: API_VERSIONS[0],
      createApiKey: LATEST_API_VERSION,
      rotateApiKey: LATEST_API_VERSION,
    });
  });
});
