import { loadSpec, type OpenApiDocument } from '@apikeys/spec';

/** The facts the server reads from the spec at start-up, so they are never copied into code. */
export interface SpecFacts {
  document: OpenApiDocument;
  /** Values of the `vendor-version` header the API supports. */
  supportedVersions: readonly string[];
  /** Default page size of `listApiKeys`. */
  defaultLimit: number;
}

type ParameterObject = { schema: { enum?: string[]; default?: number } };

/** Loads the spec and reads the facts the server needs from it. */
export function loadSpecFacts(): SpecFacts {
  const document = loadSpec();
  const parameters = document.components.parameters as Record<string, ParameterObject>;
  const supportedVersions = parameters.VendorVersion?.schema.enum;
  const defaultLimit = parameters.Limit?.schema.default;
  if (!supportedVersions?.length || defaultLimit === undefined) {
    throw new Error('spec/openapi.yaml must define the VendorVersion enum and the Limit default');
  }
  return { document, supportedVersions, defaultLimit };
}
