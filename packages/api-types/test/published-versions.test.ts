import { loadPublished, loadSpec, publishedVersions } from '@apikeys/spec';
import { breakingChanges } from '@apikeys/spec/compatibility';
import { describe, expect, it } from 'vitest';
import { API_VERSIONS } from '../src/index.js';

// Each version's document as published is kept in spec/published/ (see its README); the current document of the
// version, derived from spec/openapi.yaml, may differ from it only as the spec's Versioning section allows.
describe('a published version changes only as the versioning policy allows', () => {
  it('has the published document of every version the spec declares, and of no other', () => {
    expect(publishedVersions(), 'publish a new version: cp spec/versions/<version>.yaml spec/published/').toEqual([
      ...API_VERSIONS,
    ]);
  });

  it.each(publishedVersions())('%s: the current document breaks nothing of the published one', (version) => {
    expect(breakingChanges(loadPublished(version), loadSpec(version))).toEqual([]);
  });
});
