import { API_VERSIONS, type ApiVersion } from '@apikeys/api-types';
import { loadSpec, type OpenApiDocument } from '@apikeys/spec';

/** The OpenAPI document of each API version. */
export type VersionDocuments = Record<ApiVersion, OpenApiDocument>;

/** The document of every API version, derived from spec/openapi.yaml. */
export function loadVersionDocuments(): VersionDocuments {
  return Object.fromEntries(API_VERSIONS.map((version) => [version, loadSpec(version)])) as VersionDocuments;
}
