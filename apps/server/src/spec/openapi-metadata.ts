import type { Request } from 'express';

/** What express-openapi-validator attaches to a request it matched to an operation of the spec. */
export interface OpenApiMetadata {
  /** The spec's path template (`/v1/organizations/api_keys/{api_key_id}`). */
  openApiRoute?: string;
  /** The operation; `requestBody` is null for one that takes no body. */
  schema?: { operationId?: string; requestBody?: { required?: boolean } | null };
}

/** The validator's metadata of a request; undefined before the validator has run, or when it matched nothing. */
export function openApiMetadataOf(req: Request): OpenApiMetadata | undefined {
  return (req as Request & { openapi?: OpenApiMetadata }).openapi;
}
