import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** Absolute path of the OpenAPI document, for tools that load the spec from disk. */
export const specPath: string = fileURLToPath(new URL('./openapi.yaml', import.meta.url));

/** A parsed OpenAPI document; callers narrow the parts they read. */
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
} & Record<string, unknown>;

/** Reads and parses the spec. Each call returns a fresh object that the caller may mutate. */
export function loadSpec(): OpenApiDocument {
  return parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
}
