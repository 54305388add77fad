import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { declaredVersions, deriveVersion } from './versions.js';

/**
 * Absolute path of the hand-written source of every API version. Tools that need one version's document read
 * `versionDocumentPath(version)` or call `loadSpec(version)`.
 */
export const specPath: string = fileURLToPath(new URL('./openapi.yaml', import.meta.url));

/** A parsed OpenAPI document; callers narrow the parts they read. */
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
} & Record<string, unknown>;

/** Reads and parses the hand-written source, annotations and all (see versions.ts). */
export function loadSource(): OpenApiDocument {
  return parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
}

/** Every API version the source declares, oldest first. */
export function specVersions(): string[] {
  return declaredVersions(loadSource() as never);
}

/**
 * The document of one API version, derived from the source. Without a version, the document of the oldest one,
 * which every tool written before there were several versions reads. Each call returns a fresh object that the
 * caller may mutate.
 */
export function loadSpec(version?: string): OpenApiDocument {
  const source = loadSource();
  return deriveVersion(source as never, version ?? declaredVersions(source as never)[0] ?? '') as OpenApiDocument;
}

/** Where the committed document of a version lies (written by `scripts/derive-versions.ts`). */
export function versionDocumentPath(version: string): string {
  return fileURLToPath(new URL(`./versions/${version}.yaml`, import.meta.url));
}

/** The text of a version's document, exactly as committed under versions/. */
export function versionDocumentText(version: string): string {
  return `# Generated from spec/openapi.yaml by spec/scripts/derive-versions.ts: do not edit.\n${stringify(
    loadSpec(version),
    { lineWidth: 0 },
  )}`;
}

/** Where the document of a version lies as it was published: a frozen copy, never regenerated (published/README.md). */
export function publishedDocumentPath(version: string): string {
  return fileURLToPath(new URL(`./published/${version}.yaml`, import.meta.url));
}

/** Every version published so far: those with a document under published/, oldest first. */
export function publishedVersions(): string[] {
  const folder = fileURLToPath(new URL('./published/', import.meta.url));
  return readdirSync(folder)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort();
}

/** The document of a version exactly as it was published, which its current document may change only additively. */
export function loadPublished(version: string): OpenApiDocument {
  return parse(readFileSync(publishedDocumentPath(version), 'utf8')) as OpenApiDocument;
}
